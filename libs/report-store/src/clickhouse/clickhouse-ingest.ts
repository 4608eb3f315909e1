import { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import {
  AD_EVENT_JSON_SCHEMA,
  EVENT_TYPES,
  fnv1a32,
  fnv1a32Ascii,
  scannedField,
  type AdEvent,
  type AdEventScanner,
  type ScannedAdEvent,
} from '@app/events';
import { MEASURE_NAMES } from '@app/report-model';
import type { IngestOptions, IngestResult, OffsetEvent } from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import {
  INEXACT_FIELDS,
  isReportable,
  isSampled,
  measuresOf,
  sampleWeight,
  sampleWeightOfHash,
  utcDayOf,
  utcHourOf,
} from '../event-rollup';
import { stringLiteral, tabSeparatedField } from './clickhouse-literal';
import { classify } from './clickhouse-errors';

/** How long one INSERT may take when `insertTimeoutMs` is not given. */
export const DEFAULT_INSERT_TIMEOUT_MS = 30_000;

/** Rows per chunk of a streamed INSERT: large enough to amortise a write, small enough to yield often. */
const ROWS_PER_CHUNK = 2_000;

export const RAW_COLUMNS: [string, ...string[]] = [
  'event_date',
  'hour',
  'ts',
  'event_id',
  'type',
  'source',
  'offset',
  ...INEXACT_FIELDS,
  'sample_weight',
  ...MEASURE_NAMES,
];

/**
 * The INSERT's column order: RAW_COLUMNS with `offset` last, so that a row is written as soon as its
 * event is read and only its offset waits for the next event (which says whether the row ends its
 * frame: `rawRows`).
 */
export const INSERT_COLUMNS: [string, ...string[]] = [
  ...(RAW_COLUMNS.filter((column) => column !== 'offset') as [string, ...string[]]),
  'offset',
];

/** Bytes of a chunk buffer: rows are written into it as bytes, not strings (no UTF-8 encoding per row). */
const CHUNK_BYTES = 256 * 1024;

/**
 * The bytes of a TabSeparated INSERT, in buffers of whole rows. The row under way may wait for its
 * last field (`offset`) while the next event is read; a chunk handed on ends at the last finished
 * row, and the rest moves to the next buffer.
 */
class RowWriter {
  buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  at = 0;
  /** Where the last finished row ends. */
  finished = 0;
  rows = 0;
  /** Buffers of finished rows that filled up, waiting to be handed on. */
  readonly full: Buffer[] = [];

  /** Room for `bytes` more; a full buffer's finished rows wait in `full`. */
  ensure(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) {
      return;
    }
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, this.at - this.finished + bytes));
    this.buffer.copy(next, 0, this.finished, this.at);
    if (this.finished > 0) {
      this.full.push(this.buffer.subarray(0, this.finished));
    }
    this.at -= this.finished;
    this.finished = 0;
    this.buffer = next;
  }

  /** The finished rows, handed on; the row under way moves to a fresh buffer. */
  take(): Buffer | undefined {
    if (this.finished === 0) {
      return undefined;
    }
    const chunk = this.buffer.subarray(0, this.finished);
    const next = Buffer.allocUnsafe(CHUNK_BYTES);
    this.buffer.copy(next, 0, this.finished, this.at);
    this.at -= this.finished;
    this.finished = 0;
    this.buffer = next;
    return chunk;
  }

  copy(bytes: Uint8Array, start: number, end: number): void {
    const out = this.buffer;
    let at = this.at;
    for (let i = start; i < end; i += 1) {
      out[at] = bytes[i];
      at += 1;
    }
    this.at = at;
  }

  byte(byte: number): void {
    this.buffer[this.at] = byte;
    this.at += 1;
  }

  /** A number as decimal digits (a non-negative integer). */
  digits(value: number): void {
    if (value < 10) {
      this.byte(0x30 + value);
      return;
    }
    this.at += this.buffer.write(String(value), this.at, 'latin1');
  }

  /** Text of any kind, as UTF-8 (the rows of events parsed as objects). */
  text(value: string): void {
    this.at += this.buffer.write(value, this.at, 'utf8');
  }

  /** Ends the row under way. */
  finish(): void {
    this.finished = this.at;
    this.rows += 1;
  }
}

/**
 * The rows of one INSERT handed to ClickHouse a chunk at a time, each chunk written in a turn of the
 * event loop of its own: the client reads the stream as fast as it can, and built at once a block held the
 * loop long enough for the consumer's heartbeats to miss the fence's lease (measured in
 * bench/journal/pipeline.md, "frames, streamed inserts").
 */
class RowStream extends Readable {
  private building = false;

  constructor(
    private readonly writer: RowWriter,
    private readonly rows: Iterator<unknown, void, undefined>,
  ) {
    super();
  }

  override _read(): void {
    if (!this.building) {
      this.building = true;
      setImmediate(() => this.build());
    }
  }

  private build(): void {
    this.building = false;
    const writer = this.writer;
    const until = writer.rows + ROWS_PER_CHUNK;
    try {
      let done = false;
      while (writer.rows < until && !done) {
        done = this.rows.next().done === true;
      }
      for (let chunk = writer.full.shift(); chunk; chunk = writer.full.shift()) {
        this.push(chunk);
      }
      const chunk = writer.take();
      if (chunk) {
        this.push(chunk);
      }
      if (done) {
        this.push(null);
      }
    } catch (error) {
      this.destroy(error as Error);
    }
  }
}

export interface ClickHouseIngestOptions {
  /** The inexact tier keeps 1 impression in this many (`sampleWeight`). */
  readonly sampleDenominator: number;
  /** How long one INSERT may take before it is cancelled (and the batch retried); 30 s by default. */
  readonly insertTimeoutMs?: number;
  /** Settings of the INSERT itself (on a cluster: its quorum). */
  readonly insertSettings?: ClickHouseSettings;
}

/** The ingest's write path: a source's events streamed into `events_raw` as one INSERT. */
export class ClickHouseIngest {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly options: ClickHouseIngestOptions,
  ) {}

  /**
   * One INSERT into events_raw, which ClickHouse does not make atomic with its views: the raw part
   * is committed first, then each materialized view in name order (the cube, the rollup, the sample,
   * the offsets last). A failure half-way leaves raw rows (and maybe tier rows) without the offset, so
   * the retry writes them again; `seal` then recomputes every closed day from the raw rows
   * deduplicated by event_id, which is what makes the reports exact, not this method.
   *
   * The INSERT carries the events from the source's stored offset on, streamed: each event becomes
   * its row as ClickHouse reads the request, so a block of 50,000 parsed events is never held at
   * once (their objects die young) and the event loop turns between chunks. Nor is the raw part
   * all or nothing: a request cut off half-way is stored up to its last whole line (`rawLines`
   * says why the offset recorded stays safe).
   */
  async ingest(
    source: string,
    batch: Iterable<OffsetEvent>,
    options: IngestOptions = {},
  ): Promise<IngestResult> {
    const signal = AbortSignal.any([
      AbortSignal.timeout(this.options.insertTimeoutMs ?? DEFAULT_INSERT_TIMEOUT_MS),
      ...(options.signal ? [options.signal] : []),
    ]);
    try {
      const seen = await this.client.query({
        query: `SELECT max(last_offset) AS o, count() AS n FROM ingested_offsets WHERE source = ${stringLiteral(source)}`,
        format: 'JSONEachRow',
        abort_signal: signal,
      });
      const [{ o, n }] = await seen.json<{ o: string; n: string }>();
      const next = n !== '0' ? BigInt(o) : 0n;
      const counts = { stored: 0, skipped: 0 };
      const writer = new RowWriter();
      const rows = this.rawRows(writer, tabSeparatedField(source), batch, next, counts);
      // Nothing reportable (a redelivery, a batch of bids) sends no INSERT.
      while (writer.at === 0 && !rows.next().done) {
        // Read on until a row is under way.
      }
      if (writer.at > 0) {
        options.signal?.throwIfAborted();
        await this.client.insert({
          table: 'events_raw',
          columns: INSERT_COLUMNS,
          values: new RowStream(writer, rows),
          format: 'TabSeparated',
          abort_signal: signal,
          clickhouse_settings: this.options.insertSettings,
        });
      }
      return counts;
    } catch (error) {
      if (options.signal?.aborted) {
        throw new ReportStoreException(
          ReportStoreErrorCode.Unavailable,
          `ingest from ${source}: aborted by the caller`,
          {
            cause: error,
          },
        );
      }
      throw classify(error, `ingest from ${source}`);
    }
  }

  /**
   * Writes the rows of the events from offset `next` on into `writer`, counting them into `counts`
   * as they are read; yields after each event. A row's `offset` column is where its source may be
   * read from once the row is stored: its frame's offset + 1 for the frame's last event, the
   * frame's offset for the others. It is the row's last column, written once the next event (or
   * the end) says whether the row ended its frame. An INSERT cut off half-way may still be stored
   * up to the last whole line ClickHouse received (18.16 takes a dropped request body for its end:
   * tested), so the offset recorded (the highest of the rows stored) never passes a frame of which
   * only a part was stored.
   */
  private *rawRows(
    writer: RowWriter,
    sourceField: string,
    batch: Iterable<OffsetEvent>,
    next: bigint,
    counts: { stored: number; skipped: number },
  ): Generator<undefined, void, undefined> {
    const sourceBytes = Buffer.from(sourceField);
    // Offsets compared and computed once per frame, not per event.
    let frame = '';
    let fresh = false;
    let after = '';
    // Whether a row waits for its offset.
    let waiting = false;
    for (const offsetEvent of batch) {
      if (waiting) {
        endRow(writer, offsetEvent.offset !== frame ? after : frame);
        waiting = false;
      }
      if (offsetEvent.offset !== frame) {
        frame = offsetEvent.offset;
        fresh = BigInt(frame) >= next;
        after = (BigInt(frame) + 1n).toString();
      }
      if (!fresh) {
        counts.skipped += 1;
      } else {
        counts.stored += 1;
        const scanned = offsetEvent.scanned;
        const fields = scanned?.fields;
        waiting =
          scanned && fields
            ? this.scannedRow(writer, sourceBytes, scanned, fields)
            : this.eventRow(writer, sourceField, offsetEvent.event);
      }
      yield;
    }
    if (waiting) {
      endRow(writer, after);
    }
  }

  /**
   * The row of an event read from its message's bytes, all but its offset, copied from the bytes:
   * the scanner found every string free of escapes and control characters, so each is already a
   * TabSeparated field. False when the event is not reportable (no row).
   */
  private scannedRow(
    writer: RowWriter,
    source: Buffer,
    scanned: ScannedAdEvent,
    fields: AdEventScanner,
  ): boolean {
    const type = fields.choice(FIELD.type);
    if (!REPORTABLE_TYPES[type]) {
      return false;
    }
    const bytes = fields.bytes;
    writer.ensure(2 * (scanned.end - scanned.start) + source.length + 256);
    const ts = fields.start(FIELD.ts);
    writer.copy(bytes, ts, ts + 10);
    writer.byte(TAB);
    // The hour as a number: no leading zero.
    writer.copy(bytes, bytes[ts + 11] === ZERO ? ts + 12 : ts + 11, ts + 13);
    writer.byte(TAB);
    writer.copy(bytes, ts, ts + 10);
    writer.byte(SPACE);
    writer.copy(bytes, ts + 11, ts + 19);
    writer.byte(TAB);
    const id = FIELD.event_id;
    writer.copy(bytes, fields.start(id), fields.end(id));
    writer.byte(TAB);
    writer.copy(bytes, fields.start(FIELD.type), fields.end(FIELD.type));
    writer.byte(TAB);
    writer.copy(source, 0, source.length);
    for (const field of DIMENSION_COLUMNS) {
      writer.byte(TAB);
      writer.copy(bytes, fields.start(field), fields.end(field));
    }
    writer.byte(TAB);
    if (sampled(TYPE_NAMES[type], this.options.sampleDenominator)) {
      const hash = fields.asciiEventId
        ? hashAscii(bytes, fields.start(id), fields.end(id))
        : fnv1a32(fields.text(id));
      writer.digits(weightOfHash(hash, this.options.sampleDenominator));
    } else {
      writer.digits(1);
    }
    const measures = measuresTemplate(
      type,
      fields.has(FIELD.reopen) ? 1 + fields.choice(FIELD.reopen) : 0,
      fields.has(FIELD.attribution) ? 1 + fields.choice(FIELD.attribution) : 0,
    );
    for (const measure of measures) {
      writer.byte(TAB);
      if (measure === SPEND) {
        writer.copy(bytes, fields.start(FIELD.spend_micros), fields.end(FIELD.spend_micros));
      } else if (measure === REVENUE) {
        writer.copy(bytes, fields.start(FIELD.revenue_micros), fields.end(FIELD.revenue_micros));
      } else {
        writer.digits(measure);
      }
    }
    return true;
  }

  /** The row of an event parsed as an object, all but its offset. False when it is not reportable. */
  private eventRow(writer: RowWriter, sourceField: string, event: AdEvent): boolean {
    if (!isReportable(event)) {
      return false;
    }
    const line = this.rawLine(sourceField, event);
    writer.ensure(3 * line.length + 32);
    writer.text(line);
    return true;
  }

  /** One `events_raw` row in INSERT_COLUMNS order but its offset, `sourceField` already escaped. */
  private rawLine(sourceField: string, event: AdEvent): string {
    const measures = measuresOf(event);
    const fields: (string | number)[] = [
      utcDayOf(event.ts),
      utcHourOf(event.ts),
      `${event.ts.slice(0, 10)} ${event.ts.slice(11, 19)}`,
      tabSeparatedField(event.event_id),
      event.type,
      sourceField,
    ];
    for (const field of INEXACT_FIELDS) {
      fields.push(tabSeparatedField(event[field]));
    }
    fields.push(sampleWeight(event, this.options.sampleDenominator));
    for (const name of MEASURE_NAMES) {
      fields.push(measures[name]);
    }
    return fields.join('\t');
  }
}

const TAB = 0x09;
const NEWLINE = 0x0a;
const SPACE = 0x20;
const ZERO = 0x30;

/** Ends the row under way with its offset. */
function endRow(writer: RowWriter, offset: string): void {
  writer.ensure(offset.length + 2);
  writer.byte(TAB);
  writer.text(offset);
  writer.byte(NEWLINE);
  writer.finish();
}

/** The scanner's numbers of the fields a row reads. */
const FIELD = {
  type: scannedField('type'),
  ts: scannedField('ts'),
  event_id: scannedField('event_id'),
  reopen: scannedField('reopen'),
  attribution: scannedField('attribution'),
  spend_micros: scannedField('spend_micros'),
  revenue_micros: scannedField('revenue_micros'),
};
const DIMENSION_COLUMNS: readonly number[] = INEXACT_FIELDS.map((name) => scannedField(name));
const REPORTABLE_TYPES: readonly boolean[] = EVENT_TYPES.map((type) => isReportable({ type } as AdEvent));
// Module-level copies of what the row loop reads: an imported binding compiled to CommonJS is a
// getter on the other module's exports, called at every use.
const TYPE_NAMES: readonly AdEvent['type'][] = EVENT_TYPES;
const hashAscii = fnv1a32Ascii;
const sampled = isSampled;
const weightOfHash = sampleWeightOfHash;
const ATTRIBUTIONS = AD_EVENT_JSON_SCHEMA.properties.attribution.enum;

/** Stand-ins for the event's own spend and revenue in a measures template: copied from its bytes. */
const SPEND = -1;
const REVENUE = -2;
const templates: (readonly number[])[] = [];

/**
 * The measures of a row (MEASURE_NAMES order) as `measuresOf` makes them, by event type (its index
 * in EVENT_TYPES), reopen (0 absent, 1 false, 2 true) and attribution (0 absent, then the schema's
 * values): constants, and SPEND and REVENUE where the event's own amounts go.
 */
function measuresTemplate(type: number, reopen: number, attribution: number): readonly number[] {
  const key = type * 9 + reopen * 3 + attribution;
  let template = templates[key];
  if (!template) {
    const event = { type: EVENT_TYPES[type], spend_micros: SPEND, revenue_micros: REVENUE } as AdEvent;
    if (reopen > 0) {
      event.reopen = reopen === 2;
    }
    if (attribution > 0) {
      event.attribution = ATTRIBUTIONS[attribution - 1];
    }
    const measures = measuresOf(event);
    template = MEASURE_NAMES.map((name) => measures[name]);
    templates[key] = template;
  }
  return template;
}
