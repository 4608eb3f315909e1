import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import type { AdEvent } from '@app/events';
import { ClickHouseReportStore, isReportable, type OffsetEvent } from '@app/report-store';

/**
 * How long a closed day takes to become final on ClickHouse: the first seal of a day of N events,
 * a pass with nothing to do, and a reseal after late duplicates arrived (`--duplicates`, 1 by
 * default: the last events of yesterday delivered again).
 * `npm run bench:seal -- --events-per-day 1000000` (stack:up first).
 */
const { values } = parseArgs({
  options: {
    'events-per-day': { type: 'string', default: '1000000' },
    days: { type: 'string', default: '2' },
    duplicates: { type: 'string', default: '1' },
    url: { type: 'string', default: 'http://127.0.0.1:18123' },
    /** Keeps the database, to look at the tables afterwards. */
    keep: { type: 'boolean', default: false },
  },
});
const EVENTS_PER_DAY = Number(values['events-per-day']);
const DAYS = Number(values.days);
const DUPLICATES = Number(values.duplicates);
const NOW = new Date();

async function timed<T>(what: string, work: () => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const result = await work();
  console.log(`${what}: ${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(0)} ms`);
  return result;
}

async function main(): Promise<void> {
  const database = `adx_bench_seal_${Date.now()}`;
  const store = new ClickHouseReportStore({
    url: values.url,
    database,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 120_000,
    rawRetentionMonths: 120,
    insertTimeoutMs: 120_000,
  });
  await store.migrate();
  const events = generateDemoTraffic(loadCatalog(), {
    days: DAYS,
    eventsPerDay: EVENTS_PER_DAY,
    now: NOW,
    seed: 11,
  });
  let batch: OffsetEvent[] = [];
  let offset = 0;
  // The last reportable events generated (yesterday's), in a ring: the ones delivered again.
  const last: AdEvent[] = [];
  let reportable = 0;
  await timed(`load ${DAYS} days of ${EVENTS_PER_DAY} events`, async () => {
    for (const event of events) {
      batch.push({ offset: String(offset++), event });
      if (isReportable(event)) {
        last[reportable++ % DUPLICATES] = event;
      }
      if (batch.length === 50_000) {
        await store.ingest('bench/0', batch);
        batch = [];
      }
    }
    await store.ingest('bench/0', batch);
  });
  console.log(`${offset} events stored`);
  const first = await timed('first seal of every closed day', () => store.seal(NOW));
  console.log(`  sealed ${first.sealed.join(', ')}`);
  await timed('a pass with nothing to do', () => store.seal(NOW));
  await timed('a pass with nothing to do, again', () => store.seal(NOW));
  // A producer retry delivers the last events of yesterday once more.
  await store.ingest(
    'bench/retry',
    last.map((event, i) => ({ offset: String(i), event })),
  );
  const again = await timed(`reseal after ${last.length} late duplicate(s)`, () => store.seal(NOW));
  console.log(`  sealed ${again.sealed.join(', ')}`);
  await store.close();
  if (values.keep) {
    console.log(`kept ${database}`);
  } else {
    await fetch(`${values.url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
