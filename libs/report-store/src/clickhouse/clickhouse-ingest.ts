import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import type { AdEvent } from '@app/events';
import { MEASURE_NAMES } from '@app/report-model';
import type { IngestOptions, IngestResult, OffsetEvent } from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { INEXACT_FIELDS, isReportable, measuresOf, sampleWeight, utcDayOf, utcHourOf } from '../event-rollup';
import { stringLiteral, tabSeparatedField } from './clickhouse-literal';
import { classify } from './clickhouse-errors';

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
 * Rows handed to a TabSeparated INSERT a chunk at a time, each chunk built in a turn of the event loop of its
 * own: the client reads the stream as fast as it can, and built at once a block held the loop long enough for
 * the consumer's heartbeats to miss the fence's lease (measured in bench/journal/pipeline.md, "frames,
 * streamed inserts").
 */
class RowStream extends Readable {
  private building = false;

  constructor(
    private first: string | undefined,
    private readonly rows: Iterator<string, void, undefined>,
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
    const lines: string[] = [];
    if (this.first !== undefined) {
      lines.push(this.first);
      this.first = undefined;
    }
    try {
      for (let next = this.rows.next(); ; next = this.rows.next()) {
        if (next.done) {
          if (lines.length > 0) {
            this.push(`${lines.join('\n')}\n`);
          }
          this.push(null);
          return;
        }
        lines.push(next.value);
        if (lines.length === ROWS_PER_CHUNK) {
          this.push(`${lines.join('\n')}\n`);
          return;
        }
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
      AbortSignal.timeout(this.options.insertTimeoutMs ?? 30_000),
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
      const rows = this.rawLines(tabSeparatedField(source), batch, next, counts);
      // Nothing reportable (a redelivery, a batch of bids) sends no INSERT.
      const first = rows.next();
      if (!first.done) {
        options.signal?.throwIfAborted();
        await this.client.insert({
          table: 'events_raw',
          columns: RAW_COLUMNS,
          values: new RowStream(first.value, rows),
          format: 'TabSeparated',
          abort_signal: signal,
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
   * The rows of the events from offset `next` on, counting them into `counts` as they are read.
   * A row's `offset` column is where its source may be read from once the row is stored: its
   * frame's offset + 1 for the frame's last event, the frame's offset for the others. An INSERT
   * cut off half-way may still be stored up to the last whole line ClickHouse received (18.16
   * takes a dropped request body for its end: tested), so the offset recorded (the highest of
   * the rows stored) never passes a frame of which only a part was stored.
   */
  private *rawLines(
    sourceField: string,
    batch: Iterable<OffsetEvent>,
    next: bigint,
    counts: { stored: number; skipped: number },
  ): Generator<string, void, undefined> {
    // Offsets compared and computed once per frame, not per event.
    let frame = '';
    let fresh = false;
    let after = '';
    let held: OffsetEvent | undefined;
    const row = (offsetEvent: OffsetEvent, last: boolean): string | undefined => {
      if (offsetEvent.offset !== frame) {
        frame = offsetEvent.offset;
        fresh = BigInt(frame) >= next;
        after = (BigInt(frame) + 1n).toString();
      }
      if (!fresh) {
        counts.skipped += 1;
        return undefined;
      }
      counts.stored += 1;
      return isReportable(offsetEvent.event)
        ? this.rawLine(sourceField, offsetEvent.event, last ? after : frame)
        : undefined;
    };
    // One event held back, to know whether it ends its frame.
    for (const offsetEvent of batch) {
      if (held) {
        const line = row(held, held.offset !== offsetEvent.offset);
        if (line !== undefined) {
          yield line;
        }
      }
      held = offsetEvent;
    }
    if (held) {
      const line = row(held, true);
      if (line !== undefined) {
        yield line;
      }
    }
  }

  /** One `events_raw` row in RAW_COLUMNS order, `sourceField` already escaped. */
  private rawLine(sourceField: string, event: AdEvent, offset: string): string {
    const measures = measuresOf(event);
    const fields: (string | number)[] = [
      utcDayOf(event.ts),
      utcHourOf(event.ts),
      `${event.ts.slice(0, 10)} ${event.ts.slice(11, 19)}`,
      tabSeparatedField(event.event_id),
      event.type,
      sourceField,
      offset,
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
