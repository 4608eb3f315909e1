import 'reflect-metadata';
import { createClient } from '@clickhouse/client';
import { loadConfig } from '@app/config';
import { migrateClickHouse } from '@app/report-store';
import { IngestConfig } from '@apps/ingest';
import { reportStoreFrom } from '@app/runtime';

/**
 * `npm run ch:migrate`: applies the numbered migrations of clickhouse/ to CLICKHOUSE_URL, or with
 * CLICKHOUSE_CLUSTER to every node of CLICKHOUSE_SHARDS.
 */
async function main(): Promise<void> {
  const config = loadConfig(IngestConfig, process.env);
  if (!config.CLICKHOUSE_URL) {
    throw new Error('CLICKHOUSE_URL is not set (npm run stack:up prints it)');
  }
  if (config.CLICKHOUSE_CLUSTER) {
    // Every node of every shard, and the Distributed tables (docs/distributed.md).
    const store = await reportStoreFrom(config);
    await store.close();
    console.log(`${config.CLICKHOUSE_DATABASE}: up to date on cluster ${config.CLICKHOUSE_CLUSTER}`);
    return;
  }
  const credentials = {
    url: config.CLICKHOUSE_URL,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
  };
  const admin = createClient(credentials);
  await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${config.CLICKHOUSE_DATABASE}` });
  await admin.close();
  const client = createClient({ ...credentials, database: config.CLICKHOUSE_DATABASE });
  const applied = await migrateClickHouse(client, config.CLICKHOUSE_MIGRATIONS_DIR);
  await client.close();
  console.log(
    applied.length === 0
      ? `${config.CLICKHOUSE_DATABASE}: up to date`
      : applied
          .map(
            (m) => `${config.CLICKHOUSE_DATABASE}: applied ${String(m.version).padStart(3, '0')} ${m.name}`,
          )
          .join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
