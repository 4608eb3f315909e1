import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { StoreRow } from '@app/report-model';
import type {
  IngestOptions,
  IngestResult,
  OffsetEvent,
  ReportStore,
  SealResult,
  StoreStreamQuery,
} from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { identifier } from './clickhouse-literal';
import { classify } from './clickhouse-errors';
import { ClickHouseIngest } from './clickhouse-ingest';
import { migrateClickHouse } from './clickhouse-migrator';
import { ClickHouseReads } from './clickhouse-reads';
import { dropExpiredRaw } from './clickhouse-retention';
import { ClosedDaySealer } from './closed-day.sealer';

export { RAW_COLUMNS } from './clickhouse-ingest';

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

/** How long one migration statement may take. */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;

/**
 * The distributed report store: raw events inserted by the ingest (`ClickHouseIngest`), the exact
 * cube, the inexact sample and its rollup filled by materialized views in the same INSERT, closed
 * days sealed from the raw events (`ClosedDaySealer`), reports read with literals only
 * (`ClickHouseReads`), raw retention by partition (`dropExpiredRaw`). This class holds the client
 * and answers the store port; each path lives in its own file.
 */
export class ClickHouseReportStore implements ReportStore {
  private readonly client: ClickHouseClient;
  private readonly writes: ClickHouseIngest;
  private readonly reads: ClickHouseReads;
  private closed = false;

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
    this.writes = new ClickHouseIngest(this.client, options);
    this.reads = new ClickHouseReads(this.client, options, () => this.sealer());
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
    return this.writes.ingest(source, batch, options);
  }

  async seal(now: Date): Promise<SealResult> {
    this.assertOpen();
    try {
      return await this.sealer().seal(now);
    } catch (error) {
      throw classify(error, 'seal');
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
    // A closed store fails the first read, as any other failure would.
    const open = () => this.assertOpen();
    const reads = this.reads;
    return {
      async *[Symbol.asyncIterator]() {
        open();
        yield* reads.rows(query);
      },
    };
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

  async dropExpired(now: Date): Promise<string[]> {
    this.assertOpen();
    return dropExpiredRaw(this.client, this.options.database, this.options.rawRetentionMonths, now);
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    await this.reads.close();
    await this.client.close();
  }

  private sealer(): ClosedDaySealer {
    return new ClosedDaySealer(this.client, this.options.database, this.options.stagingAbandonedAfterMs);
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'the report store is closed');
    }
  }
}
