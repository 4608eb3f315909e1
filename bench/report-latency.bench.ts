import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { CatalogSource, loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { createLogger } from '@app/observability';
import { openReportStore, type OffsetEvent, type ReportStore } from '@app/report-store';
import { listeningPort, startHttpApp } from '@app/runtime';
import { MemoryStateStore } from '@app/state-store';
import { ReportClient } from '@app/testing';
import { loadConfig } from '@app/config';
import { ReportingConfig, ReportingModule, ReportRendererService } from '@apps/reporting';

/**
 * Report latency in embedded mode (DuckDB) over HTTP, and peak memory of a 100,000-row XLSX export.
 * `npm run bench -- --events 10000000` (the store file is reused when it already holds the events).
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    days: { type: 'string', default: '30' },
    iterations: { type: 'string', default: '40' },
    store: { type: 'string', default: 'data/bench.duckdb' },
  },
});
const EVENTS = Number(values.events);
const DAYS = Number(values.days);
const ITERATIONS = Number(values.iterations);

async function seed(store: ReportStore): Promise<void> {
  const started = Date.now();
  let batch: OffsetEvent[] = [];
  let n = 0;
  const catalog = loadCatalog();
  for (const event of generateDemoTraffic(catalog, {
    days: DAYS,
    eventsPerDay: Math.ceil(EVENTS / DAYS),
    now: new Date(),
    seed: 1,
  })) {
    batch.push({ offset: String(n + batch.length), event });
    if (batch.length === 20_000) {
      await store.ingest('bench/0', batch);
      n += batch.length;
      batch = [];
      if (n % 1_000_000 === 0) {
        console.log(`seeded ${n} events, ${Math.round(n / ((Date.now() - started) / 1000))}/s`);
      }
    }
  }
  await store.ingest('bench/0', batch);
  n += batch.length;
  console.log(`seeded ${n} events in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measureXlsxMemory(): Promise<{
  peakMb: number;
  maxRssMb: number;
  bytes: number;
  seconds: number;
}> {
  const fields = ['zip', 'impressions', 'clicks', 'ctr', 'spend', 'campaign_name'];
  const records = Array.from({ length: 100_000 }, (_, i) => ({
    zip: String(10_000 + i),
    impressions: 1000 + i,
    clicks: i % 97,
    ctr: ((i % 97) / (1000 + i)) * 100,
    spend: i / 7,
    campaign_name: `Campaign ${i % 500}`,
  }));
  const report = {
    fields,
    records,
    totals: { zip: '(totals)', impressions: 1, clicks: 1, ctr: 1, spend: 1, campaign_name: null },
    numericFields: new Set(['impressions', 'clicks', 'ctr', 'spend']),
  };
  global.gc?.();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };
  const baseline = used();
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, used());
  }, 2);
  const started = Date.now();
  const body = new ReportRendererService().render(report, 'xlsx', {
    columnNames: 'top',
    columnTotals: 'bottom',
  }).body;
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    (body as NodeJS.ReadableStream)
      .pipe(
        new Writable({
          write(chunk: Buffer, _enc, done) {
            bytes += chunk.length;
            done();
          },
        }),
      )
      .on('finish', resolve)
      .on('error', reject);
  });
  clearInterval(sampler);
  peak = Math.max(peak, used());
  return {
    peakMb: (peak - baseline) / 1024 / 1024,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    bytes,
    seconds: (Date.now() - started) / 1000,
  };
}

/** Rows in each tier against the events stored, read straight from the DuckDB file. */
async function tierSizes(file: string): Promise<string> {
  const instance = await DuckDBInstance.create(file);
  const connection = await instance.connect();
  const count = async (sql: string) => Number((await connection.runAndReadAll(sql)).getRows()[0][0]);
  const events = await count('SELECT sum(events) FROM ingested_offsets');
  const exact = await count('SELECT count(*) FROM exact_daily');
  const inexact = await count('SELECT count(*) FROM inexact_sample');
  connection.closeSync();
  instance.closeSync();
  const pct = (n: number) => ((n / events) * 100).toFixed(2);
  return `${events} events; exact_daily ${exact} rows (${pct(exact)} %); inexact_sample ${inexact} rows (${pct(inexact)} %)`;
}

async function main(): Promise<void> {
  const fresh = !existsSync(values.store);
  const store = await openReportStore({
    kind: 'duckdb',
    path: values.store,
    sampleDenominator: 10,
    queryTimeoutMs: 60_000,
  });
  if (fresh || (await store.isEmpty())) {
    await seed(store);
  }
  const config = loadConfig(ReportingConfig, { REPORTING_PORT: '0', RATE_LIMIT_PER_SECOND: '10000' });
  const app = await startHttpApp(
    ReportingModule.forRoot({
      config,
      catalog: new CatalogSource(),
      reportStore: store,
      stateStore: new MemoryStateStore(),
    }),
    { host: '127.0.0.1', port: 0, logger: createLogger('warn', 'bench'), name: 'reporting' },
  );
  const client = new ReportClient(`http://127.0.0.1:${listeningPort(app)}`, () => new Date());
  const user = { id: 'demo-adv', token: 'demo-adv-token' };
  const shapes: [string, Record<string, unknown>][] = [
    [
      'day split, 30 days (exact)',
      { splits: ['day'], columns: ['impressions', 'clicks', 'ctr', 'spend', 'gross_cpm'] },
    ],
    [
      'campaign split (exact)',
      { splits: ['campaign_id'], columns: ['campaign_name', 'impressions', 'clicks', 'spend'] },
    ],
    ['country split (inexact)', { splits: ['country'], columns: ['impressions', 'clicks', 'ctr', 'spend'] }],
  ];
  const results: string[] = [];
  for (const [name, shape] of shapes) {
    const body = { type: 'advertiser', startDate: `-${DAYS} days`, endDate: 'yesterday', ...shape };
    for (let i = 0; i < 3; i += 1) {
      await client.json(user, body);
    }
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i += 1) {
      const t0 = process.hrtime.bigint();
      const res = await client.json(user, body);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (res.status !== 200) {
        throw new Error(`${name}: HTTP ${res.status} ${res.text}`);
      }
    }
    times.sort((a, b) => a - b);
    results.push(
      `| ${name} | ${percentile(times, 50).toFixed(1)} ms | ${percentile(times, 99).toFixed(1)} ms |`,
    );
  }
  await app.close();
  await store.close();
  const tiers = await tierSizes(values.store);
  const xlsx = await measureXlsxMemory();
  console.log(`\n${EVENTS} events over ${DAYS} days, ${ITERATIONS} requests per shape\n`);
  console.log('| report | p50 | p99 |\n|---|---|---|');
  for (const line of results) {
    console.log(line);
  }
  console.log(`\nTier rows: ${tiers}`);
  console.log(
    `\nXLSX export of 100,000 rows (${(xlsx.bytes / 1e6).toFixed(1)} MB): peak heap+buffers +${xlsx.peakMb.toFixed(0)} MiB over the rows themselves, ` +
      `process max RSS ${xlsx.maxRssMb.toFixed(0)} MiB, ${xlsx.seconds.toFixed(1)} s`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
