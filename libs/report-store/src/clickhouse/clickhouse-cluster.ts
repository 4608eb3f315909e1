import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { identifier } from './clickhouse-literal';

/**
 * A ClickHouse cluster as the store uses it: its name in the servers' `remote_servers` (for the
 * `Distributed` tables) and, per shard, the HTTP URLs of its replicas, the first one preferred.
 */
export interface ClickHouseCluster {
  readonly name: string;
  readonly shards: readonly (readonly string[])[];
}

/**
 * `CLICKHOUSE_SHARDS`: shards separated by `;`, the replicas of a shard by `,`
 * (`http://a:8123,http://b:8123;http://c:8123,http://d:8123`). The order of the shards is the
 * routing's (`shardOfSource`), so it must never change while the tables hold data.
 */
export function parseShards(text: string): string[][] {
  const shards = text.split(';').map((shard) =>
    shard
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean),
  );
  if (shards.length === 0 || shards.some((replicas) => replicas.length === 0)) {
    throw new ReportStoreException(
      ReportStoreErrorCode.Failed,
      `cluster shards: every shard needs at least one replica URL (got ${JSON.stringify(text)})`,
    );
  }
  for (const url of shards.flat()) {
    if (!/^https?:\/\/\S+$/.test(url)) {
      throw new ReportStoreException(
        ReportStoreErrorCode.Failed,
        `cluster shards: ${url} is not an http(s) URL`,
      );
    }
  }
  return shards;
}

/**
 * The shard that stores a source's events. A source is `topic/partition` (Kafka) or
 * `topic/partition/run` (the in-process bus): the partition number modulo the shard count, so
 * that every partition of a topic, and every topic, spreads evenly when the partition count is a
 * multiple of the shard count. Every copy of an event travels in one partition (its key, the ad
 * slot, picks it, and a retry or a replay keeps the key), so its copies all reach one shard, where
 * the source's offsets live too: deduplication by event id and the skip of stored offsets never
 * need another shard. A source of another shape goes by a hash of its whole text.
 */
export function shardOfSource(source: string, shardCount: number): number {
  const partition = /^[^/]+\/(\d+)(?:\/|$)/.exec(source)?.[1];
  if (partition !== undefined) {
    return Number(partition) % shardCount;
  }
  // FNV-1a, 32 bits: stable across processes and releases, unlike anything seeded.
  let hash = 0x811c9dc5;
  for (let i = 0; i < source.length; i += 1) {
    hash = Math.imul(hash ^ source.charCodeAt(i), 0x01000193) >>> 0;
  }
  return hash % shardCount;
}

/** The database of the `Distributed` tables over `database`'s local tables: what reports read. */
export const distributedDatabase = (database: string) => `${identifier(database)}_cluster`;

/** The ZooKeeper path of a replicated table: one per shard, database and table. */
export const replicaPath = (database: string, table: string) =>
  `/clickhouse/tables/{shard}/${identifier(database)}/${identifier(table)}`;

const MERGE_TREE_ENGINE = /\bENGINE\s*=\s*((?:Summing|Replacing)?MergeTree)\b(\s*\(([^)]*)\))?/;
const CREATE_TABLE = /^CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)/i;

/**
 * A migration statement as it runs on a node of the cluster: a `CREATE TABLE` of a MergeTree
 * engine gets its `Replicated` variant, keyed in ZooKeeper by shard, database and table and named
 * by the node's `{replica}` macro (engine arguments kept after those two), so that the replicas of
 * a shard hold the same parts. Views and every other statement run as written. A `CREATE TABLE … AS
 * other` without an engine would copy the other's replicated engine and its ZooKeeper path, which
 * two tables cannot share: refused.
 */
export function replicatedStatement(statement: string, database: string): string {
  const table = CREATE_TABLE.exec(statement)?.[1];
  if (table === undefined) {
    return statement;
  }
  const engine = MERGE_TREE_ENGINE.exec(statement);
  if (engine === null) {
    if (/\bENGINE\s*=/.test(statement)) {
      return statement;
    }
    throw new ReportStoreException(
      ReportStoreErrorCode.Failed,
      `migration: CREATE TABLE ${table} names no engine, which a cluster needs (it would share its source's replicas)`,
    );
  }
  const args = [`'${replicaPath(database, table)}'`, "'{replica}'"];
  if (engine[3]?.trim()) {
    args.push(engine[3].trim());
  }
  return statement.replace(engine[0], `ENGINE = Replicated${engine[1]}(${args.join(', ')})`);
}

/**
 * Where a migration statement runs on a cluster: DDL on every node (each node has its own tables
 * and views), while statements that write or alter replicated data run on one replica per shard and
 * reach the others through replication (run on both, an `INSERT … SELECT` would copy twice).
 */
export const runsOnEveryReplica = (statement: string) => !/^\s*(INSERT|ALTER)\b/i.test(statement);

/**
 * The engine of a staging table for a replicated table: its own engine without replication
 * (`engine_full` of `system.tables`, with the ZooKeeper path and replica name left out), since a
 * staging table is private to the sealer's node and `REPLACE PARTITION` takes parts from any table
 * of the same structure. `undefined` for a table that is not replicated.
 */
export function unreplicatedEngine(engineFull: string): string | undefined {
  const match = /^Replicated(\w*MergeTree)\(\s*'(?:[^'\\]|\\.)*'\s*,\s*'(?:[^'\\]|\\.)*'\s*(?:,\s*)?/.exec(
    engineFull,
  );
  if (match === null) {
    return undefined;
  }
  const rest = engineFull.slice(match[0].length);
  // `Replicated…MergeTree('path', 'replica')` left `)`: the engine takes no argument.
  return rest.startsWith(')') ? `${match[1]}${rest.slice(1)}` : `${match[1]}(${rest}`;
}

/**
 * The settings of the ingest's INSERTs on a shard of `replicas` replicas: `insert_quorum` (the
 * replicas that must hold the INSERT's parts before ClickHouse answers it; every replica unless
 * `quorum` says fewer), so that a batch's Kafka offsets are committed only once its rows survive
 * the loss of the replica written to; and `insert_quorum_timeout`, half the INSERT's own timeout,
 * so that the server gives up waiting for a replica that died (18.16 waits 10 minutes by default)
 * and says why ("Timeout while waiting for quorum") before the client cancels the request.
 * `undefined` for a quorum of 1: no quorum (18.16's default). A quorum above the replica count
 * could never be met: refused.
 */
export function quorumSettings(
  replicas: number,
  quorum: number | undefined,
  insertTimeoutMs: number,
): { insert_quorum: string; insert_quorum_timeout: number } | undefined {
  const wanted = quorum ?? replicas;
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > replicas) {
    throw new ReportStoreException(
      ReportStoreErrorCode.Failed,
      `cluster: an insert quorum of ${wanted} needs that many replicas in every shard (a shard has ${replicas})`,
    );
  }
  if (wanted === 1) {
    return undefined;
  }
  return {
    insert_quorum: String(wanted),
    insert_quorum_timeout: Math.max(1_000, Math.floor(insertTimeoutMs / 2)),
  };
}
