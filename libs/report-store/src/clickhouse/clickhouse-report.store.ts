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
import { classify, isConnectionFailure } from './clickhouse-errors';
import { ClickHouseIngest, DEFAULT_INSERT_TIMEOUT_MS } from './clickhouse-ingest';
import { migrateClickHouse, migrateClickHouseCluster, type ClusterNodeClient } from './clickhouse-migrator';
import { ClickHouseReads } from './clickhouse-reads';
import {
  distributedDatabase,
  quorumSettings,
  shardOfSource,
  type ClickHouseCluster,
} from './clickhouse-cluster';
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
  /**
   * A ClickHouse cluster instead of one server (docs/distributed.md, "The product on the cluster"):
   * events go to their source's shard (`shardOfSource`), to its first replica that answers; each
   * shard is sealed on that replica; reports read the `Distributed` tables through `url` (any node),
   * or through the next node of `shards` that answers when it refuses the connection.
   */
  readonly cluster?: ClickHouseCluster;
  /**
   * On a cluster: the replicas of a shard that must hold an INSERT of the ingest before it is
   * acknowledged (`insert_quorum`); every replica of the shard when unset, none but the one written
   * to at 1 (`quorumSettings`).
   */
  readonly insertQuorum?: number;
}

/** One shard of a cluster: a client and an ingest on each replica, and the replica in use. */
interface Shard {
  readonly nodes: readonly ClusterNodeClient[];
  readonly writes: readonly ClickHouseIngest[];
  /** The replica the ingest writes to and the sealer runs on, until it fails to answer. */
  active: number;
  /**
   * With a quorum, the shard's INSERT or seal swap under way (settled, failed or not): the next one
   * waits for it. 18.16 admits one quorum INSERT at a time into a replicated table, across all its
   * partitions, and refuses another meanwhile ("Another quorum insert has been already started"), so
   * this process's own inserts into a shard go one after the other (another process's still may be
   * refused, and are tried again as any refusal is); and a swap must not replace a part whose quorum
   * is pending (`ClosedDaySealer.swap`).
   */
  writing?: Promise<unknown>;
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
  /**
   * Where reads go, the first one first: `client`, and on a cluster a client on the `Distributed`
   * tables of every other node, tried in turn when a node refuses the connection.
   */
  private readonly readClients: readonly ClickHouseClient[];
  private readonly writes: ClickHouseIngest;
  private readonly reads: ClickHouseReads;
  /** On a cluster, its shards in the configured order (the routing's). */
  private readonly shards: readonly Shard[];
  private closed = false;

  constructor(private readonly options: ClickHouseStoreOptions) {
    const client = (url: string, database: string, settings?: { insert_deduplicate: 0 }) =>
      createClient({
        url,
        username: options.username ?? 'default',
        password: options.password ?? '',
        database,
        request_timeout: options.queryTimeoutMs + 5_000,
        max_open_connections: 16,
        clickhouse_settings: settings,
        // Failures reach callers as ReportStoreException; the client's own console output is noise.
        log: { level: ClickHouseLogLevel.OFF },
      });
    const cluster = options.cluster;
    this.client = client(
      options.url,
      cluster ? distributedDatabase(options.database) : identifier(options.database),
    );
    this.readClients = [
      this.client,
      ...[...new Set(cluster?.shards.flat() ?? [])]
        .filter((url) => url !== options.url)
        .map((url) => client(url, distributedDatabase(options.database))),
    ];
    this.writes = new ClickHouseIngest(this.client, options);
    // A replicated table drops a block identical to one of its last 100 (insert_deduplicate), which
    // a view's block can be (two batches of one click each on the same key): off, as on one server.
    this.shards = (cluster?.shards ?? []).map((urls, shard) => {
      const nodes = urls.map((url) => ({
        shard,
        url,
        client: client(url, identifier(options.database), { insert_deduplicate: 0 }),
      }));
      const insertSettings = quorumSettings(
        urls.length,
        options.insertQuorum,
        options.insertTimeoutMs ?? DEFAULT_INSERT_TIMEOUT_MS,
      );
      return {
        nodes,
        writes: nodes.map((node) => new ClickHouseIngest(node.client, { ...options, insertSettings })),
        active: 0,
        writing: insertSettings ? Promise.resolve() : undefined,
      };
    });
    this.reads = cluster
      ? new ClickHouseReads(
          this.readClients,
          options,
          this.shards.flatMap((shard) =>
            shard.nodes.map((node) => ({ client: node.client, sealer: () => this.sealer(node.client) })),
          ),
          true,
        )
      : new ClickHouseReads(this.readClients, options, [
          { client: this.client, sealer: () => this.sealer() },
        ]);
  }

  async migrate(): Promise<void> {
    // Not the query timeout: a migration may copy whole tables (006 rolls up the sample: over a minute for 50
    // million events, bench/journal/reports.md), and a client that gave up would leave the server copying
    // while the next start runs the migration again.
    const client = (database?: string, url = this.options.url) =>
      createClient({
        url,
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
    if (this.options.cluster) {
      await this.migrateCluster(this.options.cluster, client);
      return;
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

  /** Every node of the cluster: its database, the migrations, the Distributed tables. */
  private async migrateCluster(
    cluster: ClickHouseCluster,
    client: (database?: string, url?: string) => ClickHouseClient,
  ): Promise<void> {
    const nodes = cluster.shards.flatMap((urls, shard) =>
      urls.map((url) => ({ shard, url, client: client(identifier(this.options.database), url) })),
    );
    try {
      for (const url of cluster.shards.flat()) {
        const admin = client(undefined, url);
        try {
          await admin.command({
            query: `CREATE DATABASE IF NOT EXISTS ${identifier(this.options.database)}`,
          });
        } finally {
          await admin.close();
        }
      }
      await migrateClickHouseCluster(nodes, this.options.migrationsDir, this.options.database, cluster.name);
    } catch (error) {
      throw classify(error, 'migrate');
    } finally {
      await Promise.all(nodes.map((node) => node.client.close()));
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
    if (this.shards.length === 0) {
      return this.writes.ingest(source, batch, options);
    }
    const shard = this.shards[shardOfSource(source, this.shards.length)];
    const write = async () => {
      const replica = shard.active;
      try {
        return await shard.writes[replica].ingest(source, batch, options);
      } catch (error) {
        // Unreachable: the retry (the ingest's own) goes to the next replica. It reads the source's
        // offset there, which may lag by what replication had not carried yet: those events are
        // written again, on the same shard, and sealing counts them once.
        if (error instanceof ReportStoreException && error.code === ReportStoreErrorCode.Unavailable) {
          shard.active = (replica + 1) % shard.nodes.length;
        }
        throw error;
      }
    };
    return this.exclusive(shard, write);
  }

  /**
   * `job` after the shard's INSERT or swap under way, when its INSERTs have a quorum (`Shard.writing`);
   * at once otherwise.
   */
  private exclusive<T>(shard: Shard, job: () => Promise<T>): Promise<T> {
    if (shard.writing === undefined) {
      return job();
    }
    const done = shard.writing.then(job, job);
    shard.writing = done.catch(() => undefined);
    return done;
  }

  async seal(now: Date): Promise<SealResult> {
    this.assertOpen();
    if (this.shards.length > 0) {
      return this.onEveryShard(
        'seal',
        async (client, shard) => this.sealer(client, (job) => this.exclusive(shard, job)).seal(now),
        (results) => ({
          sealed: [...new Set(results.flatMap((r) => r.sealed))].sort(),
          final: Math.min(...results.map((r) => r.final)),
        }),
      );
    }
    try {
      return await this.sealer().seal(now);
    } catch (error) {
      throw classify(error, 'seal');
    }
  }

  /**
   * `job` on each shard, on its active replica, or the next one when that one does not answer (which
   * becomes the shard's active replica); `combine` the shards' results. Sealing and retention each
   * run on one replica of a shard, and replication carries their swaps and drops to the other.
   */
  private async onEveryShard<T, R>(
    what: string,
    job: (client: ClickHouseClient, shard: Shard) => Promise<T>,
    combine: (results: T[]) => R,
  ): Promise<R> {
    const results: T[] = [];
    for (const shard of this.shards) {
      for (let tried = 0; ; tried += 1) {
        const replica = shard.active;
        try {
          results.push(await job(shard.nodes[replica].client, shard));
          break;
        } catch (error) {
          const failure = classify(error, `${what} on ${shard.nodes[replica].url}`);
          if (failure.code !== ReportStoreErrorCode.Unavailable || tried + 1 >= shard.nodes.length) {
            throw failure;
          }
          shard.active = (replica + 1) % shard.nodes.length;
        }
      }
    }
    return combine(results);
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
    for (let node = 0; ; node += 1) {
      try {
        const result = await this.readClients[node].query({
          query: 'SELECT count() AS n FROM ingested_offsets',
          format: 'JSONEachRow',
        });
        const [{ n }] = await result.json<{ n: string }>();
        return Number(n) === 0;
      } catch (error) {
        if (node + 1 >= this.readClients.length || !isConnectionFailure(error)) {
          throw classify(error, 'isEmpty');
        }
      }
    }
  }

  /** Ready when a node that reads answer from answers: on a cluster, any node. */
  async ping(): Promise<void> {
    this.assertOpen();
    let failure: unknown;
    for (const client of this.readClients) {
      const result = await client.ping();
      if (result.success) {
        return;
      }
      failure ??= result.error;
    }
    throw classify(failure, 'ping');
  }

  async dropExpired(now: Date): Promise<string[]> {
    this.assertOpen();
    if (this.shards.length > 0) {
      return this.onEveryShard(
        'retention',
        (client) => dropExpiredRaw(client, this.options.database, this.options.rawRetentionMonths, now),
        (dropped) => [...new Set(dropped.flat())].sort(),
      );
    }
    return dropExpiredRaw(this.client, this.options.database, this.options.rawRetentionMonths, now);
  }

  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    await this.reads.close();
    await Promise.all(this.readClients.map((client) => client.close()));
    await Promise.all(this.shards.flatMap((shard) => shard.nodes.map((node) => node.client.close())));
  }

  /** A sealer on the one server, or on one node of a cluster (its shard's local tables). */
  private sealer(
    client = this.client,
    exclusive?: <T>(job: () => Promise<T>) => Promise<T>,
  ): ClosedDaySealer {
    return new ClosedDaySealer(
      client,
      this.options.database,
      this.options.stagingAbandonedAfterMs,
      this.shards.length > 0,
      exclusive,
    );
  }

  private assertOpen(): void {
    if (this.closed) {
      throw new ReportStoreException(ReportStoreErrorCode.Unavailable, 'the report store is closed');
    }
  }
}
