import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, tmpdir } from 'node:os';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { CatalogSource, loadCatalog } from '@app/catalog';
import { loadConfig } from '@app/config';
import type { AdEvent } from '@app/events';
import { createLogger } from '@app/observability';
import { openReportStore, type OffsetEvent } from '@app/report-store';
import { listeningPort, reportStoreFrom, startHttpApp } from '@app/runtime';
import { MemoryStateStore } from '@app/state-store';
import { ReportClient, makeEvent } from '@app/testing';
import { ReportingConfig, ReportingModule } from '@apps/reporting';

/**
 * One report of a million rows, streamed in every format through the reporting app over HTTP.
 *
 * `npm run build && node dist/bench/report-stream.bench.js [--rows 1000000] [--store file.duckdb]
 *  [--formats xlsx,html,xml,json,xlsx] [--duckdb-memory-limit 64MB]` (the memory limit is
 *  DUCKDB_MEMORY_LIMIT's default unless given; `0` for DuckDB's own default)
 *
 * The parent seeds a DuckDB file (in a temporary directory, deleted at the end, unless `--store`
 * names one to keep and reuse) through the store's ingest: for each of `--rows` distinct zip codes
 * an impression, and a click for two zip codes in three, spread over the 365 days before today
 * (the store samples 1 impression in 1, so every event is in the inexact tier), so that a publisher
 * report split by zip over those days has exactly `--rows` rows. It then starts the reporting app
 * alone in a child process (`--serve`) on that file, warms it up with the same report over one day
 * in every format, and requests the big report in each of `--formats`, one at a time, reading each
 * body as it arrives. For every request: time to the response headers and to the first body byte,
 * total time, body bytes, and the server process's resident memory against its VmRSS just before
 * the request (VmRSS sampled from /proc every 50 ms, and VmHWM after resetting it through
 * /proc/<pid>/clear_refs), with the server's own peaks of JavaScript heap and ArrayBuffers.
 */
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    store: { type: 'string' },
    formats: { type: 'string', default: 'xlsx,html,xml,json,xlsx' },
    serve: { type: 'string' },
    'duckdb-memory-limit': { type: 'string' },
  },
});

const FORMATS: Readonly<Record<string, string>> = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html',
  xml: 'application/xml',
  json: 'application/json',
};
const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;

/** The reporting app's configuration on the seeded file; `--duckdb-memory-limit` sets DUCKDB_MEMORY_LIMIT. */
function benchConfig(file: string): ReportingConfig {
  return loadConfig(ReportingConfig, {
    DUCKDB_PATH: file,
    DUCKDB_MEMORY_LIMIT: values['duckdb-memory-limit'],
    INEXACT_SAMPLE_DENOMINATOR: '1',
    REPORTING_PORT: '0',
    RATE_LIMIT_PER_SECOND: '10000',
    QUERY_TIMEOUT_MS: '120000',
  });
}

/** Child mode: the reporting app alone on the seeded file; prints its port. */
async function serve(file: string): Promise<void> {
  const config = benchConfig(file);
  // The store as the app opens it, so that DUCKDB_MEMORY_LIMIT's default is what is measured.
  const store = await reportStoreFrom(config, config.QUERY_TIMEOUT_MS);
  const app = await startHttpApp(
    ReportingModule.forRoot({
      config,
      catalog: new CatalogSource(),
      reportStore: store,
      stateStore: new MemoryStateStore(),
    }),
    { host: '127.0.0.1', port: 0, logger: createLogger('warn', 'bench'), name: 'reporting' },
  );
  // Peaks of the process's memory by kind, reported and reset on each line read from stdin (as
  // one line of JSON; not a signal: Nest's shutdown hooks take SIGUSR2).
  const peaks = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    for (const k of Object.keys(peaks) as (keyof typeof peaks)[]) {
      peaks[k] = Math.max(peaks[k], m[k]);
    }
  };
  setInterval(sample, 50).unref();
  createInterface({ input: process.stdin }).on('line', () => {
    sample();
    const mib = Object.fromEntries(Object.entries(peaks).map(([k, v]) => [k, Math.round(v / MIB)]));
    console.log(`PEAKS ${JSON.stringify(mib)}`);
    for (const k of Object.keys(peaks) as (keyof typeof peaks)[]) {
      peaks[k] = 0;
    }
  });
  console.log(`PORT ${listeningPort(app)}`);
  process.on('SIGTERM', () => {
    void app
      .close()
      .then(() => store.close())
      .finally(() => process.exit(0));
  });
}

/** An impression per zip code and a click for two in three, zip code i on the day i mod 365 before today. */
function* benchEvents(rows: number, publisherId: string): Generator<AdEvent> {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  for (let i = 0; i < rows; i += 1) {
    const day = new Date(today - (1 + (i % 365)) * DAY_MS).toISOString().slice(0, 10);
    const zip = `z${String(i).padStart(7, '0')}`;
    const common = { publisher_id: publisherId, zip, country: 'US' };
    yield makeEvent({
      ...common,
      event_id: `bench-imp-${i}`,
      type: 'impression',
      ts: `${day}T10:00:00.000Z`,
      spend_micros: 1_000 + (i % 5_000),
      revenue_micros: 700 + (i % 3_500),
    });
    if (i % 3 !== 2) {
      yield makeEvent({
        ...common,
        event_id: `bench-clk-${i}`,
        type: 'click',
        ts: `${day}T10:05:00.000Z`,
      });
    }
  }
}

async function seed(file: string, rows: number, publisherId: string): Promise<void> {
  const store = await openReportStore({
    kind: 'duckdb',
    path: file,
    sampleDenominator: 1,
    queryTimeoutMs: 120_000,
  });
  try {
    if (!(await store.isEmpty())) {
      console.log(`reusing ${file}`);
      return;
    }
    const started = Date.now();
    let batch: OffsetEvent[] = [];
    let n = 0;
    for (const event of benchEvents(rows, publisherId)) {
      batch.push({ offset: String(n + batch.length), event });
      if (batch.length === 50_000) {
        await store.ingest('bench/0', batch);
        n += batch.length;
        batch = [];
      }
    }
    await store.ingest('bench/0', batch);
    n += batch.length;
    console.log(`seeded ${n} events (${rows} zip codes) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await store.close();
  }
}

function procStatus(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  /** The server's memory peaks by kind (MiB) since the last call, which resets them. */
  peaks(): Promise<Record<string, number>>;
}

async function startServer(file: string): Promise<Server> {
  const limit = values['duckdb-memory-limit'];
  const args = [process.argv[1], '--serve', file, ...(limit ? ['--duckdb-memory-limit', limit] : [])];
  const child = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: ((peaks: Record<string, number>) => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const match = /^PORT (\d+)$/.exec(line);
      if (match) {
        resolve(Number(match[1]));
      } else if (line.startsWith('PEAKS ')) {
        waiting.shift()?.(JSON.parse(line.slice(6)) as Record<string, number>);
      } else {
        console.log(`[server] ${line}`);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const peaks = () =>
    new Promise<Record<string, number>>((resolve) => {
      waiting.push(resolve);
      child.stdin.write('peaks\n');
    });
  return { child, port, peaks };
}

interface Measurement {
  format: string;
  status: number;
  code: string;
  headersMs: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  baselineMib: number;
  peakGrowthMib: number;
  hwmGrowthMib: number;
  /** The server's peaks by kind during the request, MiB (JavaScript heap, buffers, RSS). */
  serverPeaks: Record<string, number>;
}

async function measure(client: BenchClient, server: Server, format: string, body: Record<string, unknown>) {
  const pid = server.child.pid!;
  await server.peaks();
  const user = { id: 'demo-pub', token: 'demo-pub-token' };
  const payload = JSON.stringify(client.signed(user, body));
  let resetHwm = true;
  try {
    // "5" resets the peak resident set size (VmHWM) to the current one.
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    resetHwm = false;
  }
  const baseline = procStatus(pid).rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, procStatus(pid).rss);
  }, 50);
  const t0 = performance.now();
  const response = await request(`http://127.0.0.1:${client.port}/api`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: FORMATS[format] },
    body: payload,
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  const headersMs = performance.now() - t0;
  let firstByteMs = -1;
  let bytes = 0;
  for await (const chunk of response.body) {
    if (firstByteMs < 0) {
      firstByteMs = performance.now() - t0;
    }
    bytes += chunk.length;
  }
  const totalMs = performance.now() - t0;
  clearInterval(sampler);
  const after = procStatus(pid);
  peak = Math.max(peak, after.rss);
  const m: Measurement = {
    format,
    status: response.statusCode,
    code: String(response.headers['x-report-code']),
    headersMs,
    firstByteMs,
    totalMs,
    bytes,
    baselineMib: baseline / MIB,
    peakGrowthMib: (peak - baseline) / MIB,
    hwmGrowthMib: resetHwm ? (after.hwm - baseline) / MIB : NaN,
    serverPeaks: await server.peaks(),
  };
  return m;
}

/** The reporting client with the port it talks to. */
class BenchClient extends ReportClient {
  constructor(readonly port: number) {
    super(`http://127.0.0.1:${port}`, () => new Date());
  }
}

async function main(): Promise<void> {
  if (values.serve) {
    return serve(values.serve);
  }
  const rows = Number(values.rows);
  const dir = values.store ? undefined : mkdtempSync(path.join(tmpdir(), 'report-stream-'));
  const file = values.store ?? path.join(dir!, 'bench.duckdb');
  const catalog = loadCatalog();
  const publisherId = catalog.publisherIdsOf(catalog.users.get('demo-pub')!.accountId)[0];
  await seed(file, rows, publisherId);
  const server = await startServer(file);
  const { child } = server;
  const client = new BenchClient(server.port);
  const body = {
    type: 'publisher',
    startDate: '-365 days',
    endDate: 'yesterday',
    splits: ['zip'],
    columns: ['impressions', 'clicks', 'ctr', 'revenue', 'net_cpm', 'publisher_name'],
    sort: { clicks: 'desc', impressions: 'desc' },
  };
  const results: Measurement[] = [];
  try {
    // Warm-up: the same report over one day (a few thousand rows) in every format, so that the
    // figures measure the big report, not the server's first requests (JIT, lazy modules).
    for (const format of Object.keys(FORMATS)) {
      const m = await measure(client, server, format, { ...body, startDate: '-3 days', endDate: '-3 days' });
      if (m.status !== 200) {
        throw new Error(`warm-up ${format}: HTTP ${m.status}, code ${m.code}`);
      }
    }
    for (const format of values.formats.split(',')) {
      const m = await measure(client, server, format, body);
      results.push(m);
      console.log(JSON.stringify(m));
      if (m.status !== 200) {
        throw new Error(`${format}: HTTP ${m.status}, code ${m.code}`);
      }
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    if (dir) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const model =
    readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? cpus()[0]?.model;
  const configured = benchConfig(file).DUCKDB_MEMORY_LIMIT;
  const limit = configured === '0' ? "DuckDB's default" : configured;
  console.log(
    `\n${rows} rows (zip split, ${body.columns.length + 1} columns, sorted by clicks then impressions), ` +
      `DuckDB memory_limit ${limit}; ${cpus().length} CPUs (${model}), Node.js ${process.version}\n`,
  );
  console.log(
    '| format | first byte | total | body | server RSS before | peak RSS growth (VmHWM) | peak JS heap used | peak ArrayBuffers |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const m of results) {
    console.log(
      `| ${m.format} | ${(m.firstByteMs / 1000).toFixed(2)} s | ${(m.totalMs / 1000).toFixed(1)} s | ` +
        `${(m.bytes / 1e6).toFixed(1)} MB | ${m.baselineMib.toFixed(0)} MiB | ` +
        `+${(Number.isNaN(m.hwmGrowthMib) ? m.peakGrowthMib : m.hwmGrowthMib).toFixed(0)} MiB | ` +
        `${m.serverPeaks.heapUsed} MiB | ${m.serverPeaks.arrayBuffers} MiB |`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
