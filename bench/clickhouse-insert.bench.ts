import 'reflect-metadata';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { identifier, openReportStore, type ReportStore } from '@app/report-store';
import { serverCpuMicros } from './server-cpu';

/**
 * What ClickHouse itself spends to store one event, whatever feeds it: the ingest's own INSERT
 * (`events_raw` rows as TabSeparated, in blocks of `--block` rows) sent from text built beforehand,
 * so that nothing but ClickHouse works while it is timed. Run with every materialized view
 * (the cube, the rollup, the sample, the offsets), with the raw table alone, then with each view
 * alone, each into a fresh database; the CPU is clickhouse-server's, from /proc. This is the floor under the cost of
 * an event in the pipeline on one machine: `npm run build && node dist/bench/clickhouse-insert.bench.js`
 * (stack:up first).
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    block: { type: 'string', default: '50000' },
    days: { type: 'string', default: '30' },
    url: { type: 'string', default: 'http://127.0.0.1:18123' },
  },
});
const EVENTS = Number(values.events);
const BLOCK = Number(values.block);

const client = (database?: string): ClickHouseClient =>
  createClient({
    url: values.url,
    database,
    log: { level: ClickHouseLogLevel.OFF },
    request_timeout: 600_000,
  });

/** A migrated database of this run, named after `name`, and the report store open on it. */
async function migratedStore(name: string): Promise<{ database: string; store: ReportStore }> {
  const database = `adx_insert_bench_${process.pid}_${name.replace(/\W+/g, '_')}`;
  const store = await openReportStore({
    kind: 'clickhouse',
    url: values.url,
    database,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 60_000,
    rawRetentionMonths: 120,
  });
  return { database, store };
}

/**
 * The events' rows as the ingest writes them, in blocks of BLOCK rows (stored once, read back), and
 * the materialized views of the schema they were stored under.
 */
async function rowBlocks(): Promise<{ blocks: string[]; views: string[] }> {
  const { database, store } = await migratedStore('rows');
  const batch = [];
  let offset = 0;
  for (const event of generateDemoTraffic(loadCatalog(), {
    days: Number(values.days),
    eventsPerDay: Math.ceil(EVENTS / Number(values.days)),
    now: new Date(),
    seed: 11,
  })) {
    batch.push({ offset: String(offset++), event });
    if (batch.length === BLOCK) {
      await store.ingest('bench/0', batch.splice(0));
    }
    if (offset === EVENTS) {
      break;
    }
  }
  await store.ingest('bench/0', batch);
  await store.close();
  const reader = client(database);
  const views = await viewsOf(reader);
  const text = await (
    await reader.query({ query: 'SELECT * FROM events_raw ORDER BY offset', format: 'TabSeparated' })
  ).text();
  await reader.command({ query: `DROP DATABASE ${identifier(database)}` });
  await reader.close();
  const lines = text.split('\n').filter(Boolean);
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i += BLOCK) {
    blocks.push(`${lines.slice(i, i + BLOCK).join('\n')}\n`);
  }
  return { blocks, views };
}

async function timedInserts(
  name: string,
  blocks: readonly string[],
  prepare: (c: ClickHouseClient) => Promise<void>,
): Promise<void> {
  const { database, store } = await migratedStore(name);
  await store.close();
  const writer = client(database);
  await prepare(writer);
  const rows = blocks.reduce((n, b) => n + b.split('\n').length - 1, 0);
  const cpu = serverCpuMicros('clickhouse-server');
  const started = Date.now();
  for (const block of blocks) {
    await writer.insert({
      table: 'events_raw',
      values: Readable.from([block], { objectMode: false }),
      format: 'TabSeparated',
    });
  }
  const seconds = (Date.now() - started) / 1000;
  const used = serverCpuMicros('clickhouse-server') - cpu;
  console.log(
    `| ${name} | ${rows} | ${BLOCK} | ${Math.round(rows / seconds)}/s | ${(used / rows).toFixed(1)} µs | ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} |`,
  );
  await writer.command({ query: `DROP DATABASE ${identifier(database)}` });
  await writer.close();
}

/** The materialized views of `c`'s database, but `keep`, dropped. */
async function dropViewsBut(c: ClickHouseClient, keep?: string): Promise<void> {
  for (const name of await viewsOf(c)) {
    if (name !== keep) {
      await c.command({ query: `DROP TABLE ${identifier(name)}` });
    }
  }
}

async function viewsOf(c: ClickHouseClient): Promise<string[]> {
  const views = await (
    await c.query({
      query:
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name",
      format: 'JSONEachRow',
    })
  ).json<{ name: string }>();
  return views.map((v) => v.name);
}

async function main(): Promise<void> {
  const { blocks, views } = await rowBlocks();
  console.log(
    '| INSERT into events_raw | rows | rows per INSERT | rows/s | ClickHouse CPU an event | load |',
  );
  console.log('|---|---|---|---|---|---|');
  await timedInserts('with every view', blocks, async () => undefined);
  await timedInserts('raw table alone', blocks, (c) => dropViewsBut(c));
  for (const view of views) {
    await timedInserts(`raw table and ${view} alone`, blocks, (c) => dropViewsBut(c, view));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
