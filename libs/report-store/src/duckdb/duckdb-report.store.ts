import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  DuckDBDateValue,
  DuckDBInstance,
  type DuckDBAppender,
  type DuckDBConnection,
} from '@duckdb/node-api';
import type { AdEvent } from '@app/events';
import { MEASURE_NAMES, type Measures, type StoreRow, addMeasures } from '@app/report-model';
import {
  highestOffset,
  newerThan,
  type IngestOptions,
  type IngestResult,
  type OffsetEvent,
  type ReportStore,
  type SealResult,
  type StoreStreamQuery,
} from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import {
  EXACT_KEY_FIELDS,
  INEXACT_FIELDS,
  isReportable,
  measuresOf,
  retentionCutoff,
  sampleWeight,
  utcDayOf,
  utcHourOf,
} from '../event-rollup';
import { WaitBudget } from '../wait-budget';
import { exactNumber } from '../exact-number';
import { DUCKDB_MIGRATIONS } from './duckdb.migrations';
import { buildDuckDbQuery } from './duckdb-query.builder';

export interface DuckDbStoreOptions {
  /** A file path, or `:memory:`. */
  readonly path: string;
  /** Whole months of event ids kept for deduplication; older ones are dropped. Unset keeps them all. */
  readonly rawRetentionMonths?: number;
  /** Keep 1 in N impressions in the inexact tier. */
  readonly sampleDenominator: number;
  readonly queryTimeoutMs: number;
  /**
   * DuckDB's `memory_limit` (e.g. `'128MB'`), unset for DuckDB's default (80 % of the machine's memory). A
   * report of a million rows aggregates and sorts a million groups: hundreds of MiB of native memory without
   * a limit (bench/journal/reports.md, "Streamed reports"); under one, DuckDB spills to `<path>.tmp` on disk,
   * and a query that still does not fit fails (STORE_FAILED).
   */
  readonly memoryLimit?: string;
}

const DAY_MS = 86_400_000;

/** The key of an event id in `ingested_events`: its MD5 as an unsigned 128-bit integer. */
function eventKey(eventId: string): bigint {
  return BigInt(`0x${createHash('md5').update(eventId).digest('hex')}`);
}

function dateValue(day: string): DuckDBDateValue {
  return new DuckDBDateValue(Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS));
}

/** Serialises async work: DuckDB allows one writer transaction per connection at a time. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** The embedded report store: a DuckDB file holding the exact cube and the inexact sample. */
export class DuckDbReportStore implements ReportStore {
  private readonly writeLock = new Mutex();
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly options: DuckDbStoreOptions,
  ) {}

  static async open(options: DuckDbStoreOptions): Promise<DuckDbReportStore> {
    try {
      if (options.path !== ':memory:') {
        mkdirSync(path.dirname(path.resolve(options.path)), { recursive: true });
      }
      const instance = await DuckDBInstance.create(
        options.path,
        options.memoryLimit === undefined ? undefined : { memory_limit: options.memoryLimit },
      );
      return new DuckDbReportStore(instance, await instance.connect(), options);
    } catch (error) {
      throw new ReportStoreException(
        ReportStoreErrorCode.Unavailable,
        `cannot open DuckDB at ${options.path}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  async migrate(): Promise<void> {
    await this.writeLock.run(async () => {
      await this.writer.run(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)',
      );
      const applied = await this.writer.runAndReadAll('SELECT version FROM schema_migrations');
      const done = new Set(applied.getRows().map(([v]) => Number(v)));
      for (const migration of DUCKDB_MIGRATIONS) {
        if (done.has(migration.version)) {
          continue;
        }
        await this.writer.run('BEGIN TRANSACTION');
        try {
          for (const statement of migration.statements) {
            await this.writer.run(statement);
          }
          await this.writer.run('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
            migration.version,
            migration.name,
          ]);
          await this.writer.run('COMMIT');
        } catch (error) {
          await this.writer.run('ROLLBACK');
          throw error;
        }
      }
    });
  }

  /**
   * One transaction: the events above the source's offset whose ids were never stored, both tiers,
   * the ids and the offset. A failure anywhere rolls all of it back.
   */
  async ingest(
    source: string,
    events: Iterable<OffsetEvent>,
    options: IngestOptions = {},
  ): Promise<IngestResult> {
    const batch = [...events];
    return this.writeLock.run(async () => {
      if (this.closed) {
        throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'the report store is closed');
      }
      if (options.signal?.aborted) {
        throw new ReportStoreException(
          ReportStoreErrorCode.Unavailable,
          `ingest from ${source}: aborted by the caller`,
        );
      }
      await this.writer.run('BEGIN TRANSACTION');
      try {
        const seen = await this.writer.runAndReadAll(
          'SELECT last_offset FROM ingested_offsets WHERE source = $1',
          [source],
        );
        const stored = seen.currentRowCount > 0 ? BigInt(seen.getRows()[0][0] as bigint) : undefined;
        const fresh = newerThan(batch, stored);
        const events = await this.firstSeen(fresh.map((e) => e.event).filter(isReportable));
        await this.writeExact(events);
        await this.writeSample(events);
        if (fresh.length > 0) {
          await this.writer.run(
            `INSERT INTO ingested_offsets (source, last_offset, events) VALUES ($1, CAST($2 AS HUGEINT), $3)
             ON CONFLICT (source) DO UPDATE SET last_offset = EXCLUDED.last_offset,
               events = ingested_offsets.events + EXCLUDED.events, stored_at = now()`,
            [source, highestOffset(fresh).toString(), fresh.length],
          );
        }
        await this.writer.run('COMMIT');
        return { stored: events.length, skipped: batch.length - events.length };
      } catch (error) {
        await this.writer.run('ROLLBACK').catch(() => undefined);
        throw new ReportStoreException(ReportStoreErrorCode.Failed, `ingest from ${source} failed`, {
          cause: error,
        });
      }
    });
  }

  /** Writes are deduplicated in the ingest's transaction: a closed day is final as soon as it is written. */
  seal(): Promise<SealResult> {
    return Promise.resolve({ sealed: [], final: 0 });
  }

  /**
   * The ids of events older than the first day of the month `rawRetentionMonths` before `now`: an
   * event redelivered after that is counted again (the tiers themselves are kept).
   */
  async dropExpired(now: Date): Promise<string[]> {
    if (this.options.rawRetentionMonths === undefined) {
      return [];
    }
    const cutoff = retentionCutoff(now, this.options.rawRetentionMonths);
    return this.writeLock.run(async () => {
      const expired = await this.writer.runAndReadAll(
        "SELECT DISTINCT strftime(day, '%Y-%m-%d') FROM ingested_events WHERE day < CAST($1 AS DATE) ORDER BY 1",
        [cutoff],
      );
      await this.writer.run('DELETE FROM ingested_events WHERE day < CAST($1 AS DATE)', [cutoff]);
      return expired.getRows().map(([day]) => String(day));
    });
  }

  /**
   * The events whose ids are in neither `ingested_events` nor earlier in the list, and records
   * their ids: within the caller's transaction.
   */
  private async firstSeen(events: readonly AdEvent[]): Promise<AdEvent[]> {
    if (events.length === 0) {
      return [];
    }
    const keyed = new Map<bigint, AdEvent>();
    for (const event of events) {
      const key = eventKey(event.event_id);
      if (!keyed.has(key)) {
        keyed.set(key, event);
      }
    }
    const days = [...new Set(events.map((event) => utcDayOf(event.ts)))];
    await this.append('ingested_events_staging', (appender) => {
      for (const [key, event] of keyed) {
        appender.appendUHugeInt(key);
        appender.appendDate(dateValue(utcDayOf(event.ts)));
        appender.endRow();
      }
    });
    // A repeated event has the event's own day: only the batch's days are read (zone maps skip the rest).
    const inserted = await this.writer.runAndReadAll(
      `INSERT INTO ingested_events
       SELECT s.id, s.day FROM ingested_events_staging s
       ANTI JOIN (SELECT id FROM ingested_events WHERE day IN (${days.map((_, i) => `CAST($${i + 1} AS DATE)`).join(', ')})) e
       ON s.id = e.id
       RETURNING id`,
      days,
    );
    await this.writer.run('DELETE FROM ingested_events_staging');
    const fresh = new Set(inserted.getRows().map(([id]) => id as bigint));
    return [...keyed].filter(([key]) => fresh.has(key)).map(([, event]) => event);
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
   * Each query runs on its own connection, so that concurrent reports do not queue behind one
   * another and a timeout interrupts only its own query. The result is DuckDB's streaming result,
   * read a chunk (2,048 rows) at a time: the rows never pile up in JavaScript.
   */
  private async *rows(query: StoreStreamQuery): AsyncGenerator<StoreRow, void, undefined> {
    const { sql, params } = buildDuckDbQuery(query);
    const connection = await this.connect();
    const budget = new WaitBudget(query.timeoutMs ?? this.options.queryTimeoutMs, () =>
      connection.interrupt(),
    );
    const hasKey = query.split !== undefined;
    const offset = hasKey ? 1 : 0;
    let readToEnd = false;
    try {
      const result = await budget.wait(() => connection.stream(sql, params));
      for (;;) {
        const chunk = await budget.wait(() => result.fetchChunk());
        if (!chunk || chunk.rowCount === 0) {
          readToEnd = true;
          return;
        }
        // Values are converted one row at a time, as the row is asked for: a chunk's rows never
        // all exist as JavaScript objects, so they die young instead of filling the old generation.
        const keys = hasKey ? chunk.getColumnVector(0) : undefined;
        const columns = MEASURE_NAMES.map((_, i) => chunk.getColumnVector(offset + i));
        for (let r = 0; r < chunk.rowCount; r += 1) {
          const measures = {} as Measures;
          MEASURE_NAMES.forEach((name, i) => {
            measures[name] = exactNumber(columns[i].getItem(r) as bigint | number | null);
          });
          const key = keys?.getItem(r);
          yield {
            key: typeof key === 'bigint' ? Number(key) : (key as string | number | undefined),
            measures,
          };
        }
      }
    } catch (error) {
      if (error instanceof ReportStoreException) {
        throw error;
      }
      const message = (error as Error).message ?? '';
      if (budget.spent || /interrupt/i.test(message)) {
        throw new ReportStoreException(ReportStoreErrorCode.Timeout, 'query timed out', { cause: error });
      }
      throw new ReportStoreException(ReportStoreErrorCode.Failed, 'query failed', { cause: error });
    } finally {
      budget.stop();
      if (!readToEnd) {
        // A streaming result left before its end (a client gone, a failure) keeps its transaction
        // open until the result is garbage-collected, and an open transaction makes close()'s
        // CHECKPOINT fail; the node API has no way to close a result, but the next statement on
        // its connection ends it.
        await connection.run('SELECT 1').catch(() => undefined);
      }
      connection.closeSync();
    }
  }

  async isEmpty(): Promise<boolean> {
    const connection = await this.connect();
    try {
      const reader = await connection.runAndReadAll('SELECT count(*) FROM ingested_offsets');
      return Number(reader.getRows()[0][0]) === 0;
    } finally {
      connection.closeSync();
    }
  }

  async ping(): Promise<void> {
    const connection = await this.connect();
    try {
      await connection.run('SELECT 1');
    } finally {
      connection.closeSync();
    }
  }

  async close(): Promise<void> {
    await this.writeLock.run(async () => {
      if (this.closed) {
        return;
      }
      this.closed = true;
      // Folds the write-ahead log into the file, so that a clean stop leaves one file behind.
      await this.writer.run('CHECKPOINT');
      this.writer.closeSync();
      this.instance.closeSync();
    });
  }

  private async connect(): Promise<DuckDBConnection> {
    if (this.closed) {
      throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'the report store is closed');
    }
    try {
      return await this.instance.connect();
    } catch (error) {
      throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'cannot connect to DuckDB', {
        cause: error,
      });
    }
  }

  private async writeExact(events: readonly AdEvent[]): Promise<void> {
    const cells = new Map<string, { day: string; keys: string[]; measures: Measures }>();
    for (const event of events) {
      const day = utcDayOf(event.ts);
      const keys = EXACT_KEY_FIELDS.map((f) => event[f]);
      const id = `${day}\u0000${keys.join('\u0000')}`;
      const cell = cells.get(id);
      if (cell) {
        addMeasures(cell.measures, measuresOf(event));
      } else {
        cells.set(id, { day, keys, measures: measuresOf(event) });
      }
    }
    if (cells.size === 0) {
      return;
    }
    await this.append('exact_daily_staging', (appender) => {
      for (const { day, keys, measures } of cells.values()) {
        appender.appendDate(dateValue(day));
        for (const key of keys) {
          appender.appendVarchar(key);
        }
        for (const name of MEASURE_NAMES) {
          appender.appendBigInt(BigInt(measures[name]));
        }
        appender.endRow();
      }
    });
    const updates = MEASURE_NAMES.map((m) => `${m} = exact_daily.${m} + EXCLUDED.${m}`).join(', ');
    await this.writer.run(
      `INSERT INTO exact_daily SELECT * FROM exact_daily_staging ON CONFLICT (day, ${EXACT_KEY_FIELDS.join(', ')}) DO UPDATE SET ${updates}`,
    );
    await this.writer.run('DELETE FROM exact_daily_staging');
  }

  private async writeSample(events: readonly AdEvent[]): Promise<void> {
    const sampled = events
      .map((event) => ({ event, weight: sampleWeight(event, this.options.sampleDenominator) }))
      .filter((s) => s.weight > 0);
    if (sampled.length === 0) {
      return;
    }
    await this.append('inexact_sample', (appender) => {
      for (const { event, weight } of sampled) {
        appender.appendDate(dateValue(utcDayOf(event.ts)));
        appender.appendTinyInt(utcHourOf(event.ts));
        for (const field of INEXACT_FIELDS) {
          appender.appendVarchar(event[field]);
        }
        appender.appendInteger(weight);
        const measures = measuresOf(event, weight);
        for (const name of MEASURE_NAMES) {
          appender.appendBigInt(BigInt(measures[name]));
        }
        appender.endRow();
      }
    });
  }

  private async append(table: string, fill: (appender: DuckDBAppender) => void): Promise<void> {
    const appender = await this.writer.createAppender(table);
    try {
      fill(appender);
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}
