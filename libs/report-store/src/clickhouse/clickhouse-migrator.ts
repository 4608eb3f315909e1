import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';
import { distributedDatabase, replicatedStatement, runsOnEveryReplica } from './clickhouse-cluster';
import { identifier, stringLiteral } from './clickhouse-literal';

export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
}

/** `clickhouse/NNN_name.sql`, in version order. */
export function readMigrations(dir: string): { version: number; name: string; statements: string[] }[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n');
      return {
        version: Number(file.slice(0, 3)),
        name: file.slice(4, -4),
        statements: text
          .split(/;\s*(?:\n|$)/)
          .map((s) => s.trim())
          .filter(Boolean),
      };
    });
}

/**
 * Applies the numbered migrations not yet recorded in `schema_migrations`. Each statement is
 * idempotent (`IF NOT EXISTS`), so a run interrupted halfway is finished by the next one.
 */
export async function migrateClickHouse(client: ClickHouseClient, dir: string): Promise<AppliedMigration[]> {
  const done = await appliedVersions(client);
  const applied: AppliedMigration[] = [];
  for (const migration of readMigrations(dir)) {
    if (done.has(migration.version)) {
      continue;
    }
    for (const statement of migration.statements) {
      await client.command({ query: statement });
    }
    await record(client, migration);
    applied.push({ version: migration.version, name: migration.name });
  }
  return applied;
}

/** The versions recorded in a server's `schema_migrations` (made when missing). */
async function appliedVersions(client: ClickHouseClient): Promise<Set<number>> {
  await client.command({
    query:
      'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = MergeTree ORDER BY version',
  });
  const result = await client.query({
    query: 'SELECT version FROM schema_migrations',
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ version: number | string }>()).map((r) => Number(r.version)));
}

async function record(client: ClickHouseClient, migration: AppliedMigration): Promise<void> {
  await client.insert({
    table: 'schema_migrations',
    values: [
      {
        version: migration.version,
        name: migration.name,
        applied_at: new Date().toISOString().slice(0, 19).replace('T', ' '),
      },
    ],
    format: 'JSONEachRow',
  });
}

/** A node of the cluster: the shard it belongs to (0-based, in the store's order) and a client on its database. */
export interface ClusterNodeClient {
  readonly shard: number;
  readonly url: string;
  readonly client: ClickHouseClient;
}

/** How long the replicas of a shard may take to apply an ALTER their first replica ran. */
const ALTER_REPLICATION_WAIT_MS = 120_000;

/**
 * The same migrations on a cluster, node by node (each node keeps its own `schema_migrations`): the
 * MergeTree tables become their `Replicated` variants (`replicatedStatement`), DDL runs on every
 * node that has not recorded the migration, and `INSERT`/`ALTER`, which replication carries to the
 * other replicas, on the first replica of each shard only, and only while no replica of the shard has
 * recorded the migration (a run cut off after one replica recorded it copied its data already). Then
 * the `Distributed` tables the reports read (`distributedDatabase`) are made to match the local
 * tables on every node. Like the single-server path: not from two processes at once on a new cluster.
 */
export async function migrateClickHouseCluster(
  nodes: readonly ClusterNodeClient[],
  dir: string,
  database: string,
  cluster: string,
): Promise<AppliedMigration[]> {
  const done = new Map<ClusterNodeClient, Set<number>>();
  for (const node of nodes) {
    done.set(node, await appliedVersions(node.client));
  }
  const shards = [...new Set(nodes.map((n) => n.shard))];
  const applied: AppliedMigration[] = [];
  for (const migration of readMigrations(dir)) {
    const pending = nodes.filter((n) => !done.get(n)!.has(migration.version));
    if (pending.length === 0) {
      continue;
    }
    const writers = shards
      .map((shard) => nodes.filter((n) => n.shard === shard))
      .filter((replicas) => replicas.every((n) => pending.includes(n)))
      .map((replicas) => replicas[0]);
    for (const statement of migration.statements) {
      const query = replicatedStatement(statement, database);
      if (runsOnEveryReplica(query)) {
        for (const node of pending) {
          await node.client.command({ query });
        }
        continue;
      }
      for (const writer of writers) {
        await writer.client.command({ query });
        const altered = /^\s*ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)/i.exec(query)?.[1];
        if (altered !== undefined) {
          await replicasAltered(
            nodes.filter((n) => n.shard === writer.shard),
            database,
            altered,
          );
        }
      }
    }
    for (const node of pending) {
      await record(node.client, migration);
    }
    applied.push({ version: migration.version, name: migration.name });
  }
  for (const node of nodes) {
    await syncDistributedTables(node.client, database, cluster);
  }
  return applied;
}

/** A table's columns on a node, as `name type` lines in its order. */
async function columnsOf(client: ClickHouseClient, database: string, table: string): Promise<string> {
  const result = await client.query({
    query: `SELECT name, type FROM system.columns WHERE database = ${stringLiteral(database)} AND table = ${stringLiteral(table)}`,
    format: 'JSONEachRow',
  });
  return (await result.json<{ name: string; type: string }>()).map((c) => `${c.name} ${c.type}`).join('\n');
}

/** Waits until every replica of a shard has the columns its first replica has after an ALTER. */
async function replicasAltered(
  replicas: readonly ClusterNodeClient[],
  database: string,
  table: string,
): Promise<void> {
  const deadline = Date.now() + ALTER_REPLICATION_WAIT_MS;
  const wanted = await columnsOf(replicas[0].client, database, table);
  for (const replica of replicas.slice(1)) {
    while ((await columnsOf(replica.client, database, table)) !== wanted) {
      if (Date.now() > deadline) {
        throw new Error(
          `ALTER TABLE ${table} did not reach ${replica.url} in ${ALTER_REPLICATION_WAIT_MS} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * On one node: a `Distributed` table over each replicated table of `database`, with the same name
 * and columns, in `distributedDatabase(database)`; one whose columns no longer match (a migration
 * changed the table) is made again, one whose table is gone dropped.
 */
async function syncDistributedTables(
  client: ClickHouseClient,
  database: string,
  cluster: string,
): Promise<void> {
  const local = identifier(database);
  const dist = distributedDatabase(database);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${dist}` });
  const tables = async (db: string, engine: string) =>
    (
      await (
        await client.query({
          query: `SELECT name FROM system.tables WHERE database = ${stringLiteral(db)} AND engine LIKE ${stringLiteral(engine)}`,
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>()
    ).map((t) => t.name);
  const replicated = await tables(local, 'Replicated%');
  for (const table of replicated) {
    const name = identifier(table);
    const current = await columnsOf(client, dist, name);
    if (current === (await columnsOf(client, local, name))) {
      continue;
    }
    if (current !== '') {
      await client.command({ query: `DROP TABLE IF EXISTS ${dist}.${name}` });
    }
    await client.command({
      query: `CREATE TABLE IF NOT EXISTS ${dist}.${name} AS ${local}.${name} ENGINE = Distributed(${identifier(cluster)}, ${local}, ${name})`,
    });
  }
  for (const table of await tables(dist, 'Distributed')) {
    if (!replicated.includes(table)) {
      await client.command({ query: `DROP TABLE IF EXISTS ${dist}.${identifier(table)}` });
    }
  }
}
