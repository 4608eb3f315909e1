import { Readable } from 'node:stream';
import {
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
  type ResultSet,
  type Row,
} from '@clickhouse/client';
import type { AdEvent } from '@app/events';
import { MEASURE_NAMES, type Measures, type StoreRow } from '@app/report-model';
import {
  type IngestOptions,
  type IngestResult,
  type OffsetEvent,
  type ReportStore,
  type SealResult,
  type StoreStreamQuery,
} from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { WaitBudget } from '../wait-budget';
import { exactNumber } from '../exact-number';
import {
  INEXACT_FIELDS,
  isReportable,
  measuresOf,
  retentionCutoff,
  sampleWeight,
  utcDayOf,
  utcHourOf,
} from '../event-rollup';
import { identifier, stringLiteral, tabSeparatedField } from './clickhouse-literal';
import { migrateClickHouse } from './clickhouse-migrator';
import { buildClickHouseQuery, rollupDimensionFor } from './clickhouse-query.builder';
import { ClosedDaySealer, dayOfPartition } from './closed-day.sealer';
import { tierTable } from '../query-predicates';

export interface ClickHouseStoreOptions {
  readonly url: string;
  readonly database: string;
  readonly username?: string;
  readonly password?: string;
  readonly migrationsDir: string;
  readonly sampleDenominator: number;
  readonly queryTimeoutMs: number;
  /** Whole months of raw events kept; older daily partitions are dropped. */
  readonly rawRetentionMonths: number;
  /**
   * How long one INSERT of the ingest may take before it is cancelled (and the batch retried).
   * Losing the partition cancels it at once through the caller's signal (the consumer heartbeats
   * during the insert), so this only bounds a store that hangs. Defaults to 30 s.
   */
  readonly insertTimeoutMs?: number;
  /**
   * Whether inexact queries the rollup answers read it (the default) rather than the sample; the
   * contract suite and the benchmark set it to false to compare the two paths on the same data.
   */
  readonly inexactRollup?: boolean;
  /**
   * How old a sealer's staging table must be before a seal pass takes it as left by a dead sealer
   * and drops it (10 minutes by default: longer than any day's recompute or month's copy).
   */
  readonly stagingAbandonedAfterMs?: number;
}

/** The columns the ingest writes to events_raw (clickhouse/001_events_raw.sql), in its order. */
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

/**
 * How long the newest day of the monthly rollup copy is used before it is read again (in the
 * background: a day the copy held once stays right to use, as the copy only grows).
 */
const MONTHLY_THROUGH_TTL_MS = 5_000;

/** How long one migration statement may take. */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;

/** ClickHouse error codes that mean the query ran out of time. */
const TIMEOUT_CODES = new Set(['159', '160']);

function classify(error: unknown, what: string): ReportStoreException {
  if (error instanceof ReportStoreException) {
    return error;
  }
  const e = error as { code?: string; message?: string };
  const message = e.message ?? String(error);
  if (
    /ECONNREFUSED|ECONNRESET|socket hang up|ENOTFOUND|EHOSTUNREACH|Timeout error/i.test(message) ||
    e.code === 'ECONNREFUSED'
  ) {
    return new ReportStoreException(ReportStoreErrorCode.Unavailable, `${what}: ClickHouse unreachable`, {
      cause: error,
    });
  }
  if ((e.code && TIMEOUT_CODES.has(e.code)) || /TIMEOUT_EXCEEDED|Timeout exceeded/i.test(message)) {
    return new ReportStoreException(ReportStoreErrorCode.Timeout, `${what}: timed out`, { cause: error });
  }
  return new ReportStoreException(ReportStoreErrorCode.Failed, `${what}: ${message}`, { cause: error });
}

/**
 * The distributed report store: raw events inserted by the ingest, the exact cube, the inexact
 * sample and its rollup filled by materialized views in the same INSERT, every query built with
 * literals.
 */
export class ClickHouseReportStore implements ReportStore {
  private readonly client: ClickHouseClient;
  private closed = false;
  /** The newest day `inexact_monthly` holds whole, when it was read, and a read under way. */
  private monthly?: { readonly through: string | undefined; readonly readAt: number };
  private monthlyRead?: Promise<void>;
  /** A seal pass this store runs because a report found replaced rows back (`readableTables`). */
  private healing?: Promise<unknown>;

  constructor(private readonly options: ClickHouseStoreOptions) {
    this.client = createClient({
      url: options.url,
      username: options.username ?? 'default',
      password: options.password ?? '',
      database: identifier(options.database),
      request_timeout: options.queryTimeoutMs + 5_000,
      max_open_connections: 16,
      // Failures reach callers as ReportStoreException; the client's own console output is noise.
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async migrate(): Promise<void> {
    // Not the query timeout: a migration may copy whole tables (006 rolls up the sample: over a minute for 50
    // million events, bench/journal/reports.md), and a client that gave up would leave the server copying
    // while the next start runs the migration again.
    const client = (database?: string) =>
      createClient({
        url: this.options.url,
        username: this.options.username ?? 'default',
        password: this.options.password ?? '',
        database,
        request_timeout: MIGRATION_TIMEOUT_MS,
        log: { level: ClickHouseLogLevel.OFF },
      });
    const admin = client();
    try {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${identifier(this.options.database)}` });
    } catch (error) {
      throw classify(error, 'create database');
    } finally {
      await admin.close();
    }
    const migrating = client(identifier(this.options.database));
    try {
      await migrateClickHouse(migrating, this.options.migrationsDir);
    } catch (error) {
      throw classify(error, 'migrate');
    } finally {
      await migrating.close();
    }
  }

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
    this.assertOpen();
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

  async seal(now: Date): Promise<SealResult> {
    this.assertOpen();
    try {
      return await this.sealer().seal(now);
    } catch (error) {
      throw classify(error, 'seal');
    }
  }

  private sealer(): ClosedDaySealer {
    return new ClosedDaySealer(this.client, this.options.database, this.options.stagingAbandonedAfterMs);
  }

  /**
   * Makes the tables `query` reads safe to read: a restarted ClickHouse may have loaded again the
   * parts a seal's swap had replaced (see `ClosedDaySealer`), and until the day is sealed again it
   * would count twice. Such days are sealed again here, by one pass at a time, before the report
   * reads them; if they are still there after it, the report fails (code Unavailable) rather than
   * answer a number counted twice. One small read of the marker rows' granules otherwise.
   */
  private async readableTables(query: StoreStreamQuery, monthlyThrough: string | undefined): Promise<void> {
    const tables =
      query.tier === 'inexact' &&
      this.options.inexactRollup !== false &&
      rollupDimensionFor(query) !== undefined
        ? ['inexact_daily', ...(monthlyThrough === undefined ? [] : ['inexact_monthly'])]
        : [tierTable(query.tier)];
    const sealer = this.sealer();
    const ghosts = () => sealer.ghostDays(tables, query.range.start, query.range.end);
    if ((await ghosts()).length === 0) {
      return;
    }
    this.healing ??= sealer.seal(new Date()).finally(() => {
      this.healing = undefined;
    });
    await this.healing;
    const left = await ghosts();
    if (left.length > 0) {
      throw new ReportStoreException(
        ReportStoreErrorCode.Unavailable,
        `days being sealed again after a ClickHouse restart: ${left.join(', ')}`,
      );
    }
  }

  async query(query: StoreStreamQuery): Promise<StoreRow[]> {
    const rows: StoreRow[] = [];
    for await (const row of this.stream(query)) {
      rows.push(row);
    }
    return rows;
  }

  stream(query: StoreStreamQuery): AsyncIterable<StoreRow> {
    return { [Symbol.asyncIterator]: () => this.rows(query) };
  }

  /**
   * JSONEachRow read as a stream of row batches: the client parses each HTTP chunk as it arrives,
   * and a consumer that stops asking stops the socket (TCP backpressure holds ClickHouse).
   */
  private async *rows(query: StoreStreamQuery): AsyncGenerator<StoreRow, void, undefined> {
    this.assertOpen();
    const timeoutMs = query.timeoutMs ?? this.options.queryTimeoutMs;
    const abort = new AbortController();
    const budget = new WaitBudget(timeoutMs, () => abort.abort());
    let result: ResultSet<'JSONEachRow'> | undefined;
    try {
      const monthlyThrough = await budget.wait(() => this.monthlyThrough(query));
      await budget.wait(() => this.readableTables(query, monthlyThrough));
      result = await budget.wait(() =>
        this.client.query({
          query: buildClickHouseQuery(query, { inexactRollup: this.options.inexactRollup, monthlyThrough }),
          format: 'JSONEachRow',
          clickhouse_settings: {
            max_execution_time: Math.max(1, Math.ceil(timeoutMs / 1000)),
            // Filters may list thousands of values; the API already caps the request at MAX_BODY_BYTES.
            max_query_size: '8388608',
            max_ast_elements: '1000000',
            max_expanded_ast_elements: '1000000',
            // ClickHouse runs the query to its end into its own buffer (memory, then a temporary
            // file on its disk) before the first byte: a failure is an HTTP error before any row,
            // and a slow reader is not cut off by max_execution_time halfway through the rows, which
            // ClickHouse 18.16 does by ending the response early without an error.
            wait_end_of_query: 1,
          },
          abort_signal: abort.signal,
        }),
      );
      const batches = result.stream<Record<string, string | number>>()[Symbol.asyncIterator]();
      for (;;) {
        const next = await budget.wait(() => batches.next());
        if (next.done) {
          return;
        }
        for (const line of next.value as Row<Record<string, string | number>, 'JSONEachRow'>[]) {
          const row = line.json();
          // `n` drops the single all-zero row an ungrouped aggregate returns on no data.
          if (!(Number(row.n) > 0)) {
            continue;
          }
          const measures = {} as Measures;
          for (const name of MEASURE_NAMES) {
            measures[name] = exactNumber(row[name]);
          }
          const key =
            query.split === undefined ? undefined : typeof row.k === 'number' ? row.k : String(row.k);
          yield { key, measures };
        }
      }
    } catch (error) {
      if (
        budget.spent ||
        (error as Error).name === 'AbortError' ||
        /abort/i.test((error as Error).message ?? '')
      ) {
        throw new ReportStoreException(ReportStoreErrorCode.Timeout, 'query timed out', { cause: error });
      }
      throw classify(error, 'query');
    } finally {
      budget.stop();
      // Left early (or failed): destroys the response, so that the socket does not stay taken.
      result?.close();
    }
  }

  /**
   * The newest sealed day of the monthly rollup copy, for a query the rollup answers: read once and
   * then again in the background every MONTHLY_THROUGH_TTL_MS, so that a report does not wait for it.
   */
  private async monthlyThrough(query: StoreStreamQuery): Promise<string | undefined> {
    if (this.options.inexactRollup === false || rollupDimensionFor(query) === undefined) {
      return undefined;
    }
    if (this.monthly === undefined || Date.now() - this.monthly.readAt > MONTHLY_THROUGH_TTL_MS) {
      this.monthlyRead ??= this.readMonthlyThrough().finally(() => {
        this.monthlyRead = undefined;
      });
      if (this.monthly === undefined) {
        await this.monthlyRead;
      }
    }
    return this.monthly?.through;
  }

  private async readMonthlyThrough(): Promise<void> {
    try {
      const result = await this.client.query({
        query: `SELECT toString(max(day)) AS d, count() AS n FROM inexact_monthly WHERE dimension = '' AND seal_mark > 0`,
        format: 'JSONEachRow',
      });
      const [{ d, n }] = await result.json<{ d: string; n: string }>();
      this.monthly = { through: n === '0' ? undefined : d, readAt: Date.now() };
    } catch {
      // Left unknown (or as it was): the query reads inexact_daily, and reports ClickHouse's failure.
    }
  }

  async isEmpty(): Promise<boolean> {
    try {
      const result = await this.client.query({
        query: 'SELECT count() AS n FROM ingested_offsets',
        format: 'JSONEachRow',
      });
      const [{ n }] = await result.json<{ n: string }>();
      return Number(n) === 0;
    } catch (error) {
      throw classify(error, 'isEmpty');
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const result = await this.client.ping();
    if (!result.success) {
      throw classify(result.error, 'ping');
    }
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    await this.monthlyRead;
    await this.client.close();
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'the report store is closed');
    }
  }

  /**
   * Retention by partition drops (18.16 has no TTL): the raw days before the first day of the month
   * `rawRetentionMonths` before `now`. The tiers keep those days; they are no longer resealed.
   */
  async dropExpired(now: Date): Promise<string[]> {
    this.assertOpen();
    const oldest = retentionCutoff(now, this.options.rawRetentionMonths).replaceAll('-', '');
    try {
      const result = await this.client.query({
        query: `SELECT DISTINCT partition_id FROM system.parts WHERE database = ${stringLiteral(this.options.database)} AND table = 'events_raw' AND active`,
        format: 'JSONEachRow',
      });
      const dropped: string[] = [];
      for (const { partition_id: id } of await result.json<{ partition_id: string }>()) {
        if (/^\d{8}$/.test(id) && id < oldest) {
          await this.client.command({
            query: `ALTER TABLE events_raw DROP PARTITION ID ${stringLiteral(id)}`,
          });
          dropped.push(dayOfPartition(id));
        }
      }
      return dropped.sort();
    } catch (error) {
      throw classify(error, 'retention');
    }
  }

  /** One events_raw row as TabSeparated text, in RAW_COLUMNS order. */
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
