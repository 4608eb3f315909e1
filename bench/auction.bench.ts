import 'reflect-metadata';
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire, SourceMap } from 'node:module';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { Pool, request } from 'undici';
import { DEMO_CATALOG_PATH } from '@app/catalog';
import { unframe, type DeliveredMessage } from '@app/events';
import { DspSimulator, type DspSimulatorStats } from '@app/dsp-simulator';
import { freePort, STACK } from '@app/testing';

/**
 * Ad requests (`GET /img/:adSlotId`) against the auction app with simulated DSPs, all on loopback.
 * `npm run bench:auction -- [--connections 400] [--duration 30] [--warmup 5] [--dsps 5]
 * [--latency 10-80] [--bid-rate 0.8] [--rate 0] [--open-rate N] [--workers N] [--redis] [--kafka]
 * [--sample-every S] [--dsp-connections N] [--tmax MS] [--cpu-prof] [--profile-out FILE] [--json FILE]`.
 *
 * The DSP simulators run in child processes of their own and the auction app (`dist/apps/auction`)
 * in another, so that the auction's CPU time (from `/proc/<pid>/stat`) counts only the auction.
 * Every request has a new `recipient`, so every one is a new auction (never a reopen). Latency is
 * autocannon's (request written to last byte); the auction's own overhead is that latency minus
 * the DSP wait it reports in `Server-Timing: dsp;dur=…, total;dur=…`. The load is closed-loop: each
 * connection sends its next request when the previous answer arrives. `--rate N` caps it at N
 * requests a second, but autocannon sends each second's quota at the start of the second, in a
 * burst: use it to compare CPU per request at a given throughput, not for latency.
 * `--open-rate N` replaces autocannon with an open loop: N requests a second, evenly spaced, each
 * on its own connection when the previous ones are still waiting (up to `--connections`), latency
 * counted from when the request was due (what a queue in front of the app adds counts too): the
 * way to load the app at a rate it cannot sustain. `--cpu-prof` runs the auction under
 * `node --cpu-prof` and summarises where its CPU time went during the measured window.
 * Events go to the in-process bus (nobody consumes them) and state to the memory store, the app's
 * defaults without KAFKA_BROKERS and REDIS_URL; `--redis` and `--kafka` use the dev stack's
 * (fresh key and topic prefixes), `--workers N` sets AUCTION_WORKERS (CPU and RSS are then the
 * sums over the primary and its workers). V8's `--trace-gc` lines give the bytes allocated per
 * request (what each scavenge found in the young generation, plus what the full collections
 * freed); with `--redis`, `MEMORY USAGE` of every key the run left gives Redis bytes per decision.
 */
const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '400' },
    duration: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '5' },
    dsps: { type: 'string', default: '5' },
    latency: { type: 'string', default: '10-80' },
    'bid-rate': { type: 'string', default: '0.8' },
    rate: { type: 'string', default: '0' },
    'open-rate': { type: 'string', default: '0' },
    workers: { type: 'string' },
    redis: { type: 'boolean', default: false },
    kafka: { type: 'boolean', default: false },
    /** Seconds between samples of the auction's RSS (a soak's memory curve); 0: none. */
    'sample-every': { type: 'string', default: '0' },
    /** Extra V8 flags for the auction process, e.g. --max-semi-space-size=32. */
    'node-flags': { type: 'string', default: '' },
    'dsp-connections': { type: 'string' },
    tmax: { type: 'string' },
    /** AUCTION_SHED_LAG_MS for the app: 0 to compare CPU per full auction on a busy machine. */
    'shed-lag': { type: 'string' },
    /** AUCTION_SHED_INTERVAL_MS for the app: how long the lag must stand before it counts. */
    'shed-interval': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    /** Where to copy the auction's .cpuprofile (for Chrome DevTools or speedscope). */
    'profile-out': { type: 'string' },
    top: { type: 'string', default: '20' },
    json: { type: 'string' },
    /** Internal: run one DSP simulator (JSON options) and report its address over IPC. */
    simulator: { type: 'string' },
  },
});

/** Issue 16's goals: cheaper than Prebid Server per ad request, no collapse under overload. */
const GOALS = {
  cpuUsPerRequest: 1600,
  cpuUsPerRequestAim: 800,
  /** Over tmax: what an answered request may take at p99 under overload. */
  p99OverTmaxMs: 50,
  /** DSP answers lost to a late timer, as a share of the calls. */
  lostAnswerShare: 0.01,
  redisBytesPerDecision: 512,
};
const TMAX_DEFAULT_MS = 150;
/** Seats book on the strategies of the demo catalog's exchange campaigns, one per DSP in turn. */
const EXCHANGE_STRATEGIES = ['str-1-2-1-1', 'str-3-1-1-1', 'str-4-1-2-1', 'str-5-2-1-1', 'str-1-2-1-2'];
/**
 * The catalog's banner slots, requested in turn. Native slots are left out: the simulators' native
 * images are on loopback, which the native renderer refuses outside the demo.
 */
let slots: string[] = [];
const USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const ROOT = path.resolve(__dirname, '..', '..');
const AUCTION_MAIN = path.join(ROOT, 'dist', 'apps', 'auction', 'src', 'main.js');

// ---------------------------------------------------------------------------------------------
// autocannon has no type declarations; the part of its API used here.

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;
const autocannon = createRequire(__filename)('autocannon') as Autocannon;

// ---------------------------------------------------------------------------------------------
// Child mode: one simulated DSP.

async function runSimulator(json: string): Promise<void> {
  const options = JSON.parse(json) as Parameters<typeof DspSimulator.start>[0];
  const simulator = await DspSimulator.start(options);
  // Connections the exchange opened: a keep-alive pool opens few; a torn-down one opens many.
  // (The simulator keeps its server private: counted when it is still where it was.)
  let connections = 0;
  (simulator as unknown as { server?: Server }).server?.on('connection', () => (connections += 1));
  process.on('message', (message) => {
    if (message === 'stats') {
      process.send!({ stats: { ...simulator.stats(), connections } });
    }
  });
  const stop = () => void simulator.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('disconnect', stop);
  process.send!({ bidUrl: simulator.bidUrl });
}

// ---------------------------------------------------------------------------------------------
// Measurement helpers.

interface Series {
  latency: number[];
  /** Open loop: how late the generator sent each request (its own lag), ms. */
  sendDelay: number[];
  /** Open loop: per answer, the second of the window it was due in and its latency less the server's `total`. */
  timeline: { second: number; latency: number; outside?: number }[];
  dsp: number[];
  total: number[];
  overhead: number[];
  statuses: Map<number, number>;
  withoutTiming: number;
}

function newSeries(): Series {
  return {
    latency: [],
    sendDelay: [],
    timeline: [],
    dsp: [],
    total: [],
    overhead: [],
    statuses: new Map(),
    withoutTiming: 0,
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) {
    return NaN;
  }
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function stats(values: number[]): {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
} {
  const sorted = Float64Array.from(values).sort();
  const sum = values.reduce((a, b) => a + b, 0);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
    p999: r(percentile(sorted, 99.9)),
    max: r(sorted[sorted.length - 1] ?? NaN),
    mean: r(sum / Math.max(1, values.length)),
  };
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** utime + stime of a process, in µs (0 once it is gone). */
function processCpuUs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLK_TCK) * 1e6;
  } catch {
    return 0;
  }
}

function processRssMiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A process and its descendants (an auction's primary and its workers). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) {
    tree.push(...(children.get(tree[i]) ?? []));
  }
  return tree;
}

const treeCpuUs = (root: number) => processTree(root).reduce((sum, pid) => sum + processCpuUs(pid), 0);
const treeRssMiB = (root: number) =>
  Math.round(processTree(root).reduce((sum, pid) => sum + processRssMiB(pid), 0));

/**
 * The machine's TCP counters that explain tails of seconds: a connection whose handshake's last
 * packet found the listen queue full is retried by the client after 1 s, then 3 s.
 */
function tcpCounters(): Record<string, number> {
  // PassiveOpens: connections the machine accepted (a load generator reconnecting shows there).
  const wanted = [
    'ListenOverflows',
    'ListenDrops',
    'TCPSynRetrans',
    'TCPTimeouts',
    'SyncookiesSent',
    'PassiveOpens',
  ];
  const counters: Record<string, number> = {};
  const lines = ['/proc/net/netstat', '/proc/net/snmp'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== ''),
  );
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const names = lines[i].split(/\s+/);
    const numbers = lines[i + 1].split(/\s+/);
    names.forEach((name, j) => {
      if (wanted.includes(name)) {
        counters[name] = Number(numbers[j]);
      }
    });
  }
  return counters;
}

/** Busy and total CPU time of the whole machine, in clock ticks. */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const ticks = line.split(/\s+/).slice(1).map(Number);
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - ticks[3] - ticks[4], total };
}

function gitState(): { commit: string; changedUnderAppsAndLibs: number } | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'apps', 'libs');
    return {
      commit: git('rev-parse', '--short', 'HEAD'),
      changedUnderAppsAndLibs: changed ? changed.split('\n').length : 0,
    };
  } catch {
    return undefined;
  }
}

function parseRange(text: string): { min: number; max: number } {
  const [min, max = min] = text.split('-').map(Number);
  if (!Number.isFinite(min) || !Number.isFinite(max) || min > max) {
    throw new Error(`bad range ${text}`);
  }
  return { min, max };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Processes.

interface Simulators {
  children: ChildProcess[];
  bidUrls: string[];
}

async function startSimulators(count: number, latencyMs: { min: number; max: number }, bidRate: number) {
  const children: ChildProcess[] = [];
  const bidUrls: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const options = { latencyMs, bidRate, priceCpm: { min: 0.5, max: 3 }, seat: `bench-${i}` };
    const child = fork(__filename, ['--simulator', JSON.stringify(options)], { execArgv: [] });
    children.push(child);
    bidUrls.push(
      await new Promise<string>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`simulator ${i} exited with ${code}`)));
        child.on('message', (message: { bidUrl?: string }) => {
          if (message.bidUrl) {
            resolve(message.bidUrl);
          }
        });
      }),
    );
  }
  return { children, bidUrls } satisfies Simulators;
}

type SimulatorStats = DspSimulatorStats & { connections: number };

function askSimulatorStats(child: ChildProcess): Promise<SimulatorStats> {
  return new Promise((resolve) => {
    const listener = (message: { stats?: SimulatorStats }) => {
      if (!message.stats) {
        return;
      }
      child.off('message', listener);
      resolve(message.stats);
    };
    child.on('message', listener);
    child.send('stats');
  });
}

/** Counters of all the simulators together. */
async function sumSimulatorStats(simulators: Simulators) {
  const all = await Promise.all(simulators.children.map((c) => askSimulatorStats(c)));
  const sum = (pick: (s: SimulatorStats) => number) => all.reduce((n, s) => n + pick(s), 0);
  return {
    bidRequests: sum((s) => s.requests),
    bids: sum((s) => s.bids),
    noBids: sum((s) => s.noBids),
    impressionPixels: sum((s) => s.impressions),
    winNotices: sum((s) => s.wins),
    connectionsOpened: sum((s) => s.connections),
    overdue10ms: sum((s) => s.overdueAnswers.over10ms),
    overdue40ms: sum((s) => s.overdueAnswers.over40ms),
    overdue80ms: sum((s) => s.overdueAnswers.over80ms),
  };
}

function writeCatalog(dir: string, bidUrls: string[]): string {
  const catalog = JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as Record<string, unknown> & {
    adSlots: { id: string; format?: string }[];
  };
  slots = catalog.adSlots.filter((slot) => (slot.format ?? 'banner') === 'banner').map((slot) => slot.id);
  catalog.dsps = bidUrls.map((endpoint, i) => ({
    id: `dsp-bench-${i + 1}`,
    name: `Bench DSP ${i + 1}`,
    endpoint,
    seats: [{ id: `bench-${i + 1}`, strategyId: EXCHANGE_STRATEGIES[i % EXCHANGE_STRATEGIES.length] }],
    timeoutMs: 120,
  }));
  const file = path.join(dir, 'catalog.json');
  writeFileSync(file, JSON.stringify(catalog));
  return file;
}

interface AuctionProcess {
  child: ChildProcess;
  log: string[];
  gc: GcLine[];
  exited: Promise<number | null>;
}

/** Fresh names on the shared servers for this run. */
const RUN_ID = `bench-${Date.now().toString(36)}-${process.pid}`;
/** As long as the app's default `adx:`, so that the bytes per decision are a deployment's. */
const REDIS_PREFIX = `${(Date.now() % 46_656).toString(36).padStart(3, '0')}:`;
const KAFKA_PREFIX = `${RUN_ID}.`;

/** One GC as `--trace-gc` tells it: heap before and after, in MB, and when the line arrived. */
interface GcLine {
  readonly pid: number;
  /** Scavenge, Mark-Compact, ... */
  readonly kind: string;
  readonly beforeMb: number;
  readonly afterMb: number;
  /** The pause, ms (the first figure after the sizes). */
  readonly pauseMs: number;
  readonly at: number;
}

const GC_LINE =
  /^\[(\d+):0x[0-9a-f]+\]\s+\d+ ms: ([A-Za-z() -]+?) ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \//;

function startAuction(port: number, catalogPath: string, profileDir?: string): AuctionProcess {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AUCTION_PORT: String(port),
    AUCTION_PUBLIC_URL: `http://127.0.0.1:${port}`,
    CATALOG_PATH: catalogPath,
    LOG_LEVEL: 'warn',
    // The simulated DSPs listen on loopback: their win notices and trackers are called there.
    DSP_URL_ALLOW_PRIVATE: '1',
  };
  delete env.KAFKA_BROKERS;
  delete env.REDIS_URL;
  delete env.AUCTION_WORKERS;
  if (values.redis) {
    env.REDIS_URL = STACK.redisUrl;
    env.REDIS_KEY_PREFIX = REDIS_PREFIX;
  }
  if (values.kafka) {
    env.KAFKA_BROKERS = STACK.kafkaBrokers;
    env.KAFKA_TOPIC_PREFIX = KAFKA_PREFIX;
    env.KAFKA_CLIENT_ID = RUN_ID;
    env.KAFKA_SPOOL_DIR = mkdtempSync(path.join(tmpdir(), 'adx-bench-spool-'));
  }
  if (values.workers) {
    env.AUCTION_WORKERS = values.workers;
  }
  if (values['dsp-connections']) {
    env.DSP_CONNECTIONS = values['dsp-connections'];
  }
  if (values.tmax) {
    env.AUCTION_TMAX_MS = values.tmax;
  }
  if (values['shed-lag']) {
    env.AUCTION_SHED_LAG_MS = values['shed-lag'];
  }
  if (values['shed-interval']) {
    env.AUCTION_SHED_INTERVAL_MS = values['shed-interval'];
  }
  // The app exits 0 once closed on SIGTERM, which is when --cpu-prof writes its profile (one per
  // process: the primary's and each worker's).
  const flags = [
    '--trace-gc',
    ...values['node-flags'].split(' ').filter(Boolean),
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
  ];
  const child = spawn(process.execPath, [...flags, AUCTION_MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const gc: GcLine[] = [];
  const collect = (chunk: Buffer) => {
    const at = performance.now();
    for (const line of chunk.toString('utf8').split('\n')) {
      const match = GC_LINE.exec(line);
      if (match) {
        gc.push({
          pid: Number(match[1]),
          kind: match[2].trim(),
          beforeMb: Number(match[3]),
          afterMb: Number(match[5]),
          pauseMs: Number(match[7]),
          at,
        });
      } else if (line.trim() && log.length < 10_000) {
        log.push(line);
      }
    }
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, log, gc, exited };
}

/** The GC pauses in the window, by kind: how many, their sum and the longest, ms. */
function gcPauses(gc: readonly GcLine[], from: number, to: number) {
  const byKind: Record<string, { count: number; totalMs: number; maxMs: number }> = {};
  for (const line of gc) {
    if (line.at >= from && line.at <= to) {
      const entry = (byKind[line.kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
      entry.count += 1;
      entry.totalMs = Math.round((entry.totalMs + line.pauseMs) * 10) / 10;
      entry.maxMs = Math.max(entry.maxMs, line.pauseMs);
    }
  }
  return byKind;
}

/** Bytes the auction's processes allocated between two instants (performance.now()), from their GCs. */
function allocatedBytes(gc: readonly GcLine[], from: number, to: number): number {
  const lastAfter = new Map<number, number>();
  let mb = 0;
  for (const line of gc) {
    const previous = lastAfter.get(line.pid);
    if (line.at >= from && line.at <= to && previous !== undefined) {
      mb += Math.max(0, line.beforeMb - previous);
    }
    lastAfter.set(line.pid, line.afterMb);
  }
  return mb * 1024 * 1024;
}

async function waitReady(port: number, auction: AuctionProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  let exited = false;
  void auction.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    try {
      const response = await request(
        `http://127.0.0.1:${port}/img/slot-1-1-2?placement=ready&recipient=readiness-check`,
      );
      await response.body.dump();
      return;
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`auction app not ready:\n${auction.log.slice(-20).join('\n')}`);
}

async function stopAuction(auction: AuctionProcess): Promise<string> {
  auction.child.kill('SIGTERM');
  const code = await Promise.race([auction.exited, sleep(15_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    auction.child.kill('SIGKILL');
    await auction.exited;
    return 'did not exit within 15 s of SIGTERM (killed)';
  }
  return `exited with ${code}`;
}

/** The auction's counters of interest from `/metrics` (and its event loop lag histogram), summed over the labels kept. */
async function scrapeCounters(port: number): Promise<Map<string, number>> {
  const response = await request(`http://127.0.0.1:${port}/metrics`);
  const text = await response.body.text();
  const counters = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match =
      /^(adx_(?:ad_requests|dsp_answers|tracker_calls|event_publish_failures|dsp_late_answers|dsp_late_timer_answers|auctions_shed|dsp_throttled)_total|adx_event_loop_lag_seconds_bucket)(?:\{(.*)\})? (\S+)$/.exec(
        line,
      );
    if (!match) {
      continue;
    }
    // Per DSP is noise here: the five simulators behave alike.
    const labels = (match[2] ?? '')
      .split(/,(?=\w+=")/)
      .filter((l) => l && !l.startsWith('dsp='))
      .join(',');
    const key = `${match[1]}{${labels}}`;
    counters.set(key, (counters.get(key) ?? 0) + Number(match[3]));
  }
  return counters;
}

function counterDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [key, value] of [...after].sort()) {
    const d = value - (before.get(key) ?? 0);
    if (d > 0) {
      delta[key] = d;
    }
  }
  return delta;
}

// ---------------------------------------------------------------------------------------------
// Load.

let recipientSequence = 0;
const runTag = Date.now().toString(36);

function load(port: number, seconds: number, series: Series): Promise<AutocannonResult> {
  const connections = Number(values.connections);
  const rate = Number(values.rate);
  // onResponse (headers) runs just before the instance's 'response' event (latency) of the same
  // response, synchronously: the timing read by the first is consumed by the second.
  let pending: { dsp: number; total: number } | null | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: seconds,
        ...(rate > 0 ? { overallRate: rate } : {}),
        headers: { 'user-agent': USER_AGENT, 'accept-language': 'en-US,en;q=0.9' },
        requests: [
          {
            setupRequest: (req: AutocannonRequest) => {
              req.path = nextPath();
              return req;
            },
            onResponse: (
              _status: number,
              _body: string,
              _context: unknown,
              headers: Record<string, unknown>,
            ) => {
              pending = serverTiming(headers);
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      series.statuses.set(status, (series.statuses.get(status) ?? 0) + 1);
      series.latency.push(ms);
      if (pending) {
        series.dsp.push(pending.dsp);
        series.total.push(pending.total);
        series.overhead.push(ms - pending.dsp);
      } else {
        series.withoutTiming += 1;
      }
      pending = undefined;
    });
  });
}

/** The next ad request's path: a new recipient, the banner slots in turn. */
function nextPath(): string {
  recipientSequence += 1;
  const slot = slots[recipientSequence % slots.length];
  const recipient = `bench${runTag}${recipientSequence.toString(36).padStart(8, '0')}`;
  return `/img/${slot}?placement=bench-${runTag}&list=bench&recipient=${recipient}`;
}

/**
 * An open loop: `rate` requests a second, each sent when due whatever the answers to the earlier
 * ones (up to `--connections` at once; beyond, a request waits for a connection, and that wait
 * counts in its latency, which runs from when it was due). The shape of a publisher's send.
 */
/**
 * The open loop's connections, kept from the warm-up into the measured window: a pool opened anew
 * at the window's start put hundreds of TCP handshakes into its first second (client p99 867 ms in
 * that second against 100-260 ms in the others), which a server with clients on keep-alive does
 * not see at a steady rate.
 */
let openLoopPool: Pool | undefined;

async function openLoad(
  port: number,
  seconds: number,
  rate: number,
  series: Series,
  last: boolean,
): Promise<AutocannonResult> {
  openLoopPool ??= new Pool(`http://127.0.0.1:${port}`, {
    connections: Number(values.connections),
    keepAliveTimeout: 30_000,
  });
  const pool = openLoopPool;
  const started = performance.now();
  const end = started + seconds * 1000;
  const pending = new Set<Promise<void>>();
  let sent = 0;
  let errors = 0;
  let timeouts = 0;
  const fire = (due: number) => {
    series.sendDelay.push(performance.now() - due);
    const call = pool
      .request({
        path: nextPath(),
        method: 'GET',
        headers: { 'user-agent': USER_AGENT, 'accept-language': 'en-US,en;q=0.9' },
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      })
      .then(async (response) => {
        await response.body.dump();
        const ms = performance.now() - due;
        series.statuses.set(response.statusCode, (series.statuses.get(response.statusCode) ?? 0) + 1);
        series.latency.push(ms);
        const timing = serverTiming(response.headers);
        series.timeline.push({
          second: Math.floor((due - started) / 1000),
          latency: ms,
          outside: timing ? ms - timing.total : undefined,
        });
        if (timing) {
          series.dsp.push(timing.dsp);
          series.total.push(timing.total);
          series.overhead.push(ms - timing.dsp);
        } else {
          series.withoutTiming += 1;
        }
      })
      .catch((error: Error) => {
        if (/timeout/i.test(error.message)) {
          timeouts += 1;
        } else {
          errors += 1;
        }
      })
      .finally(() => pending.delete(call));
    pending.add(call);
  };
  // Every millisecond, the requests that fell due since the last tick, each at its own due time.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(now, end);
      const target = Math.floor(((due - started) / 1000) * rate);
      for (; sent < target; sent += 1) {
        fire(started + (sent * 1000) / rate);
      }
      if (now >= end) {
        resolve();
      } else {
        setTimeout(tick, 1);
      }
    };
    tick();
  });
  await Promise.allSettled([...pending]);
  if (last) {
    await pool.close();
    openLoopPool = undefined;
  }
  return {
    requests: { average: rate, total: sent },
    latency: { p50: NaN, p99: NaN, average: NaN, max: NaN },
    errors,
    timeouts,
    non2xx: 0,
    duration: seconds,
    statusCodeStats: {},
  };
}

function timelineOf(series: Series): string[] {
  const bySecond = new Map<number, { latency: number[]; outside: number[] }>();
  for (const { second, latency, outside } of series.timeline) {
    const entry = bySecond.get(second) ?? { latency: [], outside: [] };
    entry.latency.push(latency);
    if (outside !== undefined) {
      entry.outside.push(outside);
    }
    bySecond.set(second, entry);
  }
  return [...bySecond]
    .sort((a, b) => a[0] - b[0])
    .map(([second, e]) => {
      const l = stats(e.latency);
      const o = stats(e.outside);
      return `${second}s: ${e.latency.length} answers, p50 ${Math.round(l.p50)} p99 ${Math.round(l.p99)} max ${Math.round(l.max)} ms, outside the server p99 ${Math.round(o.p99)} ms`;
    });
}

function serverTiming(headers: Record<string, unknown>): { dsp: number; total: number } | null {
  let value: unknown;
  for (const [name, v] of Object.entries(headers)) {
    if (name.toLowerCase() === 'server-timing') {
      value = v;
    }
  }
  if (typeof value !== 'string') {
    return null;
  }
  const dsp = /(?:^|,)\s*dsp;dur=([\d.]+)/.exec(value);
  const total = /(?:^|,)\s*total;dur=([\d.]+)/.exec(value);
  return dsp && total ? { dsp: Number(dsp[1]), total: Number(total[1]) } : null;
}

// ---------------------------------------------------------------------------------------------
// CPU profile summary.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileSummary {
  file: string;
  windowSamples: number;
  allSamples: number;
  filteredToWindow: boolean;
  idleShare: number;
  byPackage: { name: string; share: number }[];
  topSelf: { function: string; share: number }[];
  topInclusive: { function: string; share: number }[];
  phases: { phase: string; share: number }[];
}

/**
 * The parts of an ad request, recognised by a frame of the stack: the first rule (in this order)
 * that a frame of the sample's stack matches names the sample's phase. Promise
 * continuations and deferred socket writes lose the caller, so undici's own work shows apart.
 */
const PHASES: readonly (readonly [string, (frame: CallFrame) => boolean])[] = [
  ['bid request: build and serialise', (f) => f.functionName === 'buildBidRequest'],
  ['DSP answer: read body', (f) => f.functionName === 'readLimited'],
  ['DSP call: BidderClient.send', (f) => f.functionName === 'send' && f.url.endsWith('bidder.client.js')],
  ['DSP answer: validateBidResponse', (f) => f.functionName === 'validateBidResponse'],
  [
    'markup: substituteMacros + extractMarkup',
    (f) => ['extractMarkup', 'substituteMacros'].includes(f.functionName),
  ],
  ['events: toMessage (JSON.stringify)', (f) => f.functionName === 'toMessage'],
  [
    'events: build event objects',
    (f) =>
      ['bidEvent', 'decisionEvent', 'baseEvent', 'dimensionsOf', 'viewerDimensions'].includes(f.functionName),
  ],
  ['events: publisher and in-process bus', (f) => /event\.publisher|in-process-event-bus/.test(f.url)],
  ['state store (decision JSON, touches)', (f) => /decision\.store|memory-state-store/.test(f.url)],
  ['viewer: HMAC, user agent, geo', (f) => /viewer\.resolver|ua-parser|mmdb|maxmind/.test(f.url)],
  ['tag query', (f) => f.url.includes('tag-query.parser')],
  ['impression trackers', (f) => f.url.includes('tracker.dispatcher')],
  ['metrics (prom-client)', (f) => f.url.includes('/prom-client/')],
  ['auction: other app code (judge, settle, answer)', (f) => f.url.includes('/dist/apps/auction/')],
  ['undici: DSP sockets (write, parse, pool)', (f) => f.url.includes('/undici/')],
  ['incoming HTTP: Express + Nest', (f) => /\/(express|router|@nestjs|finalhandler)\//.test(f.url)],
  ['incoming HTTP: node:http', (f) => /node:_http_/.test(f.url)],
  ['sockets and streams (node core)', (f) => /node:net|stream/.test(f.url)],
];

function phaseOf(chain: CallFrame[]): string {
  if (chain[0].functionName === '(garbage collector)') {
    return 'garbage collector';
  }
  for (const [phase, matches] of PHASES) {
    if (chain.some(matches)) {
      return phase;
    }
  }
  return 'other';
}

const sourceMaps = new Map<string, SourceMap | null>();

/** `file:line` of a call frame, through the source map when the file is ours. */
function location(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '');
  if (!file) {
    return '';
  }
  if (file.startsWith(ROOT) && !file.includes('node_modules')) {
    let map = sourceMaps.get(file);
    if (map === undefined) {
      map = existsSync(`${file}.map`)
        ? new SourceMap(
            JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0],
          )
        : null;
      sourceMaps.set(file, map);
    }
    const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
    const relative = path.relative(path.join(ROOT, 'dist'), file).replace(/\.js$/, '.ts');
    return entry && 'originalLine' in entry ? `${relative}:${entry.originalLine + 1}` : relative;
  }
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    return `${file.slice(modules + 'node_modules/'.length)}:${frame.lineNumber + 1}`;
  }
  return `${file}:${frame.lineNumber + 1}`;
}

function packageOf(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '');
  if (!file) {
    return frame.functionName.startsWith('(') ? frame.functionName : '(native: V8 builtins, JSON, RegExp)';
  }
  if (file.startsWith('node:')) {
    return 'node: core (http, net, streams, timers)';
  }
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = file.slice(modules + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (file.startsWith(ROOT)) {
    const parts = path.relative(path.join(ROOT, 'dist'), file).split('/');
    return `app: ${parts.slice(0, 2).join('/')}`;
  }
  return file;
}

function summariseProfile(file: string, fromUs: number, toUs: number, top: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    for (const c of n.children ?? []) {
      parent.set(c, n.id);
    }
  }
  const keyOf = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'} ${location(n.callFrame)}`.trim();
  // The profile's clock is the monotonic clock of process.hrtime: keep the measured window only.
  const filtered = profile.startTime <= toUs && profile.endTime >= fromUs;
  const counts = new Map<number, number>();
  let t = profile.startTime;
  let windowSamples = 0;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i];
    if (filtered && (t < fromUs || t > toUs)) {
      return;
    }
    counts.set(id, (counts.get(id) ?? 0) + 1);
    windowSamples += 1;
  });
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  const phases = new Map<string, number>();
  let idle = 0;
  for (const [id, count] of counts) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += count;
      continue;
    }
    const key = keyOf(node);
    self.set(key, (self.get(key) ?? 0) + count);
    const pkg = packageOf(node.callFrame);
    packages.set(pkg, (packages.get(pkg) ?? 0) + count);
    const chain: CallFrame[] = [];
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      chain.push(byId.get(at)!.callFrame);
      const k = keyOf(byId.get(at)!);
      if (seen.has(k)) {
        continue;
      }
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + count);
    }
    const phase = phaseOf(chain);
    phases.set(phase, (phases.get(phase) ?? 0) + count);
  }
  const busy = windowSamples - idle;
  const ranked = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => ({ k, share: Math.round((1000 * v) / Math.max(1, busy)) / 10 }));
  return {
    file,
    windowSamples,
    allSamples: profile.samples.length,
    filteredToWindow: filtered,
    idleShare: Math.round((1000 * idle) / Math.max(1, windowSamples)) / 10,
    phases: ranked(phases, PHASES.length + 2).map(({ k, share }) => ({ phase: k, share })),
    byPackage: ranked(packages, 15).map(({ k, share }) => ({ name: k, share })),
    topSelf: ranked(self, top).map(({ k, share }) => ({ function: k, share })),
    // App functions only (and the roots), inclusive of what they call.
    topInclusive: ranked(inclusive, top, (k) => / (apps|libs)\//.test(k)).map(({ k, share }) => ({
      function: k,
      share,
    })),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (values.simulator) {
    return runSimulator(values.simulator);
  }
  const dspCount = Number(values.dsps);
  const latencyMs = parseRange(values.latency);
  const dir = mkdtempSync(path.join(tmpdir(), 'adx-auction-bench-'));
  const profileDir = values['cpu-prof'] ? path.join(dir, 'profile') : undefined;

  const simulators = await startSimulators(dspCount, latencyMs, Number(values['bid-rate']));
  const catalogPath = writeCatalog(dir, simulators.bidUrls);
  const port = await freePort();
  const auction = startAuction(port, catalogPath, profileDir);
  let result: Awaited<ReturnType<typeof measure>>;
  try {
    await waitReady(port, auction);
    result = await measure(port, auction, simulators);
  } finally {
    for (const child of simulators.children) {
      child.kill('SIGTERM');
    }
  }
  const shutdown = await stopAuction(auction);
  const redis = values.redis ? await redisUsage(result.counters) : undefined;
  const kafka = values.kafka ? await kafkaCounts(result.totalCounters) : undefined;

  // With workers, one profile per process: the busiest first.
  const profiles =
    profileDir && existsSync(profileDir)
      ? readdirSync(profileDir)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) =>
            summariseProfile(
              path.join(profileDir, f),
              result.windowUs.from,
              result.windowUs.to,
              Number(values.top),
            ),
          )
          .sort((a, b) => b.windowSamples * (100 - b.idleShare) - a.windowSamples * (100 - a.idleShare))
      : [];
  const profile = profiles[0];

  const { series, elapsedS } = result;
  const responses = series.latency.length;
  const tmaxMs = values.tmax ? Number(values.tmax) : TMAX_DEFAULT_MS;
  const answers = Object.entries(result.counters)
    .filter(([k]) => k.startsWith('adx_dsp_answers_total'))
    .reduce((n, [, v]) => n + v, 0);
  const timeouts = Object.entries(result.counters)
    .filter(([k]) => k.startsWith('adx_dsp_answers_total{status="timeout"'))
    .reduce((n, [, v]) => n + v, 0);
  const lostToLateTimer = result.counters['adx_dsp_late_timer_answers_total{result="lost"}'] ?? 0;
  const summary = {
    machine: {
      nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
      cpu: /Model name:\s*(.+)/.exec(execFileSync('lscpu', { encoding: 'utf8' }))?.[1]?.trim(),
      node: process.version,
    },
    // Other engineers change the app while benchmarks run: what was measured.
    code: gitState(),
    date: new Date().toISOString(),
    options: {
      connections: Number(values.connections),
      rate: Number(values['open-rate'])
        ? `open loop, ${values['open-rate']}/s`
        : Number(values.rate) || 'unpaced',
      durationS: Number(values.duration),
      warmupS: Number(values.warmup),
      dsps: dspCount,
      latencyMs,
      bidRate: Number(values['bid-rate']),
      workers: values.workers ? Number(values.workers) : 'app default',
      redis: values.redis,
      kafka: values.kafka,
      nodeFlags: values['node-flags'] || undefined,
      dspConnections: values['dsp-connections'] ? Number(values['dsp-connections']) : 'app default (64)',
      tmaxMs,
      shedLagMs: values['shed-lag'] ? Number(values['shed-lag']) : 'app default (5)',
      shedIntervalMs: values['shed-interval'] ? Number(values['shed-interval']) : 'app default (100)',
      cpuProf: values['cpu-prof'],
    },
    responses,
    requestsPerSecond: Math.round(responses / elapsedS),
    statuses: Object.fromEntries(series.statuses),
    withoutServerTiming: series.withoutTiming,
    loadErrors: {
      errors: result.autocannon.errors,
      timeouts: result.autocannon.timeouts,
      non2xx: result.autocannon.non2xx,
    },
    latencyMs: stats(series.latency),
    /** Open loop: how late the load generator itself sent the requests (it shares the machine). */
    generatorSendDelayMs: series.sendDelay.length > 0 ? stats(series.sendDelay) : undefined,
    /** The generator's own event loop delay in the window (a stall there adds to every latency). */
    generatorLoopDelayMs: result.generatorLoopDelayMs,
    /** Open loop, per second of the window: answers, latency p50 / p99 / max, and p99 of the time outside the server's `total`. */
    timeline: timelineOf(series),
    /** Answers that took over a second (the open loop's), and the machine's TCP counters meanwhile. */
    overOneSecond: series.latency.filter((ms) => ms > 1000).length,
    tcp: result.tcpDelta,
    overheadMs: stats(series.overhead),
    serverTotalMs: stats(series.total),
    dspWaitMs: stats(series.dsp),
    cpu: result.cpu,
    allocatedKiBPerRequest: Math.round(result.allocatedBytes / Math.max(1, responses) / 1024),
    /** The auction's GC pauses in the window, by kind (`--trace-gc`): a pause holds every request. */
    gcPausesMs: result.gcPausesMs,
    auctionRssMiB: result.rssMiB,
    rssSamplesMiB: result.rssSamples,
    /** Timeouts are answers lost: the simulators answer well within their budget. */
    dspTimeoutShare: Math.round((10_000 * timeouts) / Math.max(1, answers)) / 10_000,
    /** The app's own count of answers lost to a late timer (an upper bound), over the DSP calls. */
    dspLostToLateTimerShare: Math.round((10_000 * lostToLateTimer) / Math.max(1, answers)) / 10_000,
    simulators: result.simulatorTotals,
    auctionCounters: result.counters,
    redis,
    kafka,
    auctionLog: {
      lines: auction.log.length,
      warnOrWorse: auction.log
        .filter((l) => /"level":\s*([4-6]\d)/.test(l) || !l.startsWith('{'))
        .slice(0, 20),
    },
    shutdown,
    profile,
    otherProfiles: profiles.slice(1).map((p) => ({ file: p.file, idleShare: p.idleShare, phases: p.phases })),
  };
  if (values.json) {
    writeFileSync(values.json, JSON.stringify(summary, null, 2));
  }
  console.log(JSON.stringify(summary, null, 2));
  console.log(markdown(summary));
  if (profile && values['profile-out']) {
    copyFileSync(profile.file, values['profile-out']);
  }
  rmSync(dir, { recursive: true, force: true });
}

async function measure(port: number, auction: AuctionProcess, simulators: Simulators) {
  const pid = auction.child.pid!;
  const openRate = Number(values['open-rate']);
  const run = (seconds: number, series: Series, last = true) =>
    openRate > 0 ? openLoad(port, seconds, openRate, series, last) : load(port, seconds, series);
  const warmup = Number(values.warmup);
  if (warmup > 0) {
    await run(warmup, newSeries(), false);
  }
  await sleep(500); // the warm-up's abandoned requests end before the window opens
  const series = newSeries();
  const simPids = simulators.children.map((c) => c.pid!);
  const countersBefore = await scrapeCounters(port);
  const simulatorsBefore = await sumSimulatorStats(simulators);
  const before = {
    auction: treeCpuUs(pid),
    perProcess: new Map(processTree(pid).map((p) => [p, processCpuUs(p)])),
    simulators: simPids.reduce((sum, p) => sum + processCpuUs(p), 0),
    bench: process.cpuUsage(),
    machine: machineTicks(),
    tcp: tcpCounters(),
    at: process.hrtime.bigint(),
    now: performance.now(),
  };
  const rssSamples: { s: number; mib: number }[] = [];
  const every = Number(values['sample-every']) * 1000;
  const sampler =
    every > 0
      ? setInterval(
          () =>
            rssSamples.push({ s: Math.round((performance.now() - before.now) / 1000), mib: treeRssMiB(pid) }),
          every,
        )
      : undefined;
  // The generator's own event loop: a stall there reads answers late and counts as their latency.
  const generatorLoop = monitorEventLoopDelay({ resolution: 5 });
  generatorLoop.enable();
  const loadResult = await run(Number(values.duration), series);
  generatorLoop.disable();
  clearInterval(sampler);
  const after = {
    auction: treeCpuUs(pid),
    perProcess: new Map(processTree(pid).map((p) => [p, processCpuUs(p)])),
    simulators: simPids.reduce((sum, p) => sum + processCpuUs(p), 0),
    bench: process.cpuUsage(before.bench),
    machine: machineTicks(),
    tcp: tcpCounters(),
    at: process.hrtime.bigint(),
    now: performance.now(),
  };
  const generatorLoopDelayMs = {
    p99: Math.round(generatorLoop.percentile(99) / 1e5) / 10,
    max: Math.round(generatorLoop.max / 1e5) / 10,
  };
  const elapsedS = Number(after.at - before.at) / 1e9;
  const responses = series.latency.length;
  const machineBusyShare =
    (after.machine.busy - before.machine.busy) / (after.machine.total - before.machine.total);
  const nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  const auctionUs = after.auction - before.auction;
  const simulatorsUs = after.simulators - before.simulators;
  const benchUs = after.bench.user + after.bench.system;
  const machineUs = machineBusyShare * nproc * elapsedS * 1e6;
  const perRequest = (us: number) => Math.round(us / Math.max(1, responses));
  const cores = (us: number) => Math.round((100 * us) / (elapsedS * 1e6)) / 100;
  const cpu = {
    auctionUsPerRequest: perRequest(auctionUs),
    /** Each auction process's share (the primary first, then its workers), µs per request. */
    auctionUsPerRequestByProcess: [...after.perProcess].map(([p, us]) =>
      perRequest(us - (before.perProcess.get(p) ?? 0)),
    ),
    auctionCores: cores(auctionUs),
    simulatorsUsPerRequest: perRequest(simulatorsUs),
    simulatorsCores: cores(simulatorsUs),
    loadGeneratorUsPerRequest: perRequest(benchUs),
    loadGeneratorCores: cores(benchUs),
    machineBusyCores: cores(machineUs),
    otherProcessesCores: cores(Math.max(0, machineUs - auctionUs - simulatorsUs - benchUs)),
  };
  // The GC lines of the window come through the pipe a little after: wait for them.
  await sleep(300);
  const allocated = allocatedBytes(auction.gc, before.now, after.now);
  const gcPausesMs = gcPauses(auction.gc, before.now, after.now);
  const countersAfter = await scrapeCounters(port);
  const counters = counterDelta(countersBefore, countersAfter);
  const simulatorsAfter = await sumSimulatorStats(simulators);
  const simulatorTotals = Object.fromEntries(
    Object.entries(simulatorsAfter).map(([k, v]) => [
      k,
      v - simulatorsBefore[k as keyof typeof simulatorsAfter],
    ]),
  );
  return {
    series,
    elapsedS,
    cpu,
    allocatedBytes: allocated,
    gcPausesMs,
    generatorLoopDelayMs,
    rssMiB: treeRssMiB(pid),
    rssSamples,
    autocannon: loadResult,
    counters,
    totalCounters: Object.fromEntries(countersAfter),
    simulatorTotals,
    windowUs: { from: Number(before.at / 1000n), to: Number(after.at / 1000n) },
    /** The whole machine's TCP counters over the window (other work included). */
    tcpDelta: Object.fromEntries(Object.entries(after.tcp).map(([k, v]) => [k, v - (before.tcp[k] ?? 0)])),
  };
}

/**
 * Redis memory the run left, from `MEMORY USAGE` of every key under the run's prefix, by kind
 * (the key's first segment), per decision kept; the keys are deleted afterwards.
 */
async function redisUsage(counters: Record<string, number>) {
  const redis = new Redis(STACK.redisUrl);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${REDIS_PREFIX}*`, 'COUNT', 5000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const byKind = new Map<string, { keys: number; bytes: number }>();
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const pipeline = redis.pipeline();
      for (const key of batch) {
        pipeline.memory('USAGE', key);
      }
      const sizes = (await pipeline.exec()) ?? [];
      batch.forEach((key, j) => {
        const kind = key.slice(REDIS_PREFIX.length).split(':')[0];
        const entry = byKind.get(kind) ?? { keys: 0, bytes: 0 };
        entry.keys += 1;
        entry.bytes += Number(sizes[j]?.[1] ?? 0);
        byKind.set(kind, entry);
      });
    }
    for (let i = 0; i < keys.length; i += 1000) {
      await redis.unlink(...keys.slice(i, i + 1000));
    }
    // The first-visit ids of the last seconds live 10 s: not a decision's memory, listed by kind only.
    const bytes = [...byKind].filter(([kind]) => kind !== 'first-visit').reduce((n, [, e]) => n + e.bytes, 0);
    // Every ad request of the bench is a new viewer: each decided once (warm-up included).
    const decisions = Object.entries(counters)
      .filter(([k]) => /adx_ad_requests_total\{endpoint="img",result="(unique|unfilled)"/.test(k))
      .reduce((n, [, v]) => n + v, 0);
    const allDecisions = byKind.get('d')?.keys ?? byKind.get('decision')?.keys ?? decisions;
    return {
      keys: keys.length,
      bytes,
      decisions: allDecisions,
      bytesPerDecision: Math.round(bytes / Math.max(1, allDecisions)),
      byKind: Object.fromEntries(
        [...byKind].map(([kind, e]) => [
          kind,
          {
            ...e,
            bytesPerKey: Math.round(e.bytes / Math.max(1, e.keys)),
            perDecision: Math.round(e.bytes / Math.max(1, allDecisions)),
          },
        ]),
      ),
    };
  } finally {
    redis.disconnect();
  }
}

/**
 * Events on each of the run's Kafka topics (read back from the beginning, frames unpacked) against
 * what the auction counted: every view an impression, every DSP answer a bid, every filled decision
 * a win, every decision an auction (every request of the bench is a new reader). Topics deleted after.
 */
async function kafkaCounts(counters: Record<string, number>) {
  const kafka = new Kafka({ brokers: STACK.kafkaBrokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const consumer = kafka.consumer({ groupId: `${RUN_ID}-count` });
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(KAFKA_PREFIX));
    const counts: Record<string, number> = Object.fromEntries(
      topics.map((t) => [t.slice(KAFKA_PREFIX.length), 0]),
    );
    // What is left to read, per topic and partition: up to the end as it is now.
    const pending = new Map<string, number>();
    for (const topic of topics) {
      for (const o of await admin.fetchTopicOffsets(topic)) {
        if (Number(o.high) > Number(o.low)) {
          pending.set(`${topic}/${o.partition}`, Number(o.high) - 1);
        }
      }
    }
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const out: DeliveredMessage[] = [];
          unframe(message, out);
          counts[batch.topic.slice(KAFKA_PREFIX.length)] += out.length;
        }
        const last = Number(batch.lastOffset());
        const key = `${batch.topic}/${batch.partition}`;
        if ((pending.get(key) ?? -1) <= last) {
          pending.delete(key);
        }
      },
    });
    const deadline = Date.now() + 300_000;
    while (pending.size > 0 && Date.now() < deadline) {
      await sleep(200);
    }
    const sum = (pattern: RegExp) =>
      Object.entries(counters)
        .filter(([k]) => pattern.test(k))
        .reduce((n, [, v]) => n + v, 0);
    const expected = {
      'adx.impression': sum(/^adx_ad_requests_total\{endpoint="img",result="(unique|reopen)"/),
      'adx.bid': sum(/^adx_dsp_answers_total/),
      // A win for every filled decision, catalog demand's too: each viewed once, by its own request.
      'adx.win': sum(/^adx_ad_requests_total\{endpoint="img",result="unique"/),
      'adx.auction': sum(/^adx_ad_requests_total\{endpoint="img",result="(unique|unfilled)"/),
    };
    await consumer.disconnect();
    await admin.deleteTopics({ topics }).catch(() => undefined);
    return {
      events: counts,
      expectedFromCounters: expected,
      unread: [...pending.keys()],
      publishFailures: sum(/^adx_event_publish_failures_total/),
    };
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await admin.disconnect();
  }
}

function markdown(s: {
  requestsPerSecond: number;
  options: { tmaxMs: number };
  latencyMs: ReturnType<typeof stats>;
  overheadMs: ReturnType<typeof stats>;
  serverTotalMs: ReturnType<typeof stats>;
  dspWaitMs: ReturnType<typeof stats>;
  cpu: {
    auctionUsPerRequest: number;
    auctionCores: number;
    simulatorsCores: number;
    loadGeneratorCores: number;
    otherProcessesCores: number;
  };
  allocatedKiBPerRequest: number;
  auctionRssMiB: number;
  dspTimeoutShare: number;
  dspLostToLateTimerShare: number;
  auctionCounters: Record<string, number>;
  redis?: { bytesPerDecision: number };
  profile?: ProfileSummary;
}): string {
  const verdict = (value: number, goal: number, higherIsBetter: boolean) => {
    const met = higherIsBetter ? value >= goal : value <= goal;
    const off = higherIsBetter ? (goal - value) / goal : (value - goal) / goal;
    return met ? 'met' : `missed by ${Math.round(off * 100)} %`;
  };
  const shed = Object.entries(s.auctionCounters)
    .filter(([k]) => k.startsWith('adx_auctions_shed_total'))
    .reduce((n, [, v]) => n + v, 0);
  const p99Goal = s.options.tmaxMs + GOALS.p99OverTmaxMs;
  const rows = [
    ['ad requests / s', `${s.requestsPerSecond}`, '', ''],
    ['latency p50', `${s.latencyMs.p50.toFixed(1)} ms`, '', ''],
    [
      'latency p99',
      `${s.latencyMs.p99.toFixed(1)} ms`,
      `< tmax + ${GOALS.p99OverTmaxMs} = ${p99Goal} ms (under overload)`,
      verdict(s.latencyMs.p99, p99Goal, false),
    ],
    [
      'overhead (latency − DSP wait) p50 / p99',
      `${s.overheadMs.p50.toFixed(2)} / ${s.overheadMs.p99.toFixed(2)} ms`,
      '',
      '',
    ],
    [
      'server `total` p50 / p99',
      `${s.serverTotalMs.p50.toFixed(2)} / ${s.serverTotalMs.p99.toFixed(2)} ms`,
      '',
      '',
    ],
    ['DSP wait p50 / p99', `${s.dspWaitMs.p50.toFixed(1)} / ${s.dspWaitMs.p99.toFixed(1)} ms`, '', ''],
    [
      'auction CPU per ad request',
      `${s.cpu.auctionUsPerRequest} µs`,
      `< ${GOALS.cpuUsPerRequest} µs (aim ${GOALS.cpuUsPerRequestAim})`,
      verdict(s.cpu.auctionUsPerRequest, GOALS.cpuUsPerRequest, false),
    ],
    ['allocated per ad request', `${s.allocatedKiBPerRequest} KiB`, '', ''],
    ['auction RSS at the end', `${s.auctionRssMiB} MiB`, '', ''],
    [
      'DSP calls timed out (answers lost)',
      `${(100 * s.dspTimeoutShare).toFixed(2)} %`,
      `< ${100 * GOALS.lostAnswerShare} %`,
      verdict(s.dspTimeoutShare, GOALS.lostAnswerShare, false),
    ],
    [
      "DSP answers lost to a late timer (the app's count, an upper bound)",
      `${(100 * s.dspLostToLateTimerShare).toFixed(2)} %`,
      `< ${100 * GOALS.lostAnswerShare} %`,
      verdict(s.dspLostToLateTimerShare, GOALS.lostAnswerShare, false),
    ],
    ['auctions shed to direct and house demand', `${shed}`, '', ''],
    ...(s.redis
      ? [
          [
            'Redis bytes per decision',
            `${s.redis.bytesPerDecision}`,
            `≤ ${GOALS.redisBytesPerDecision}`,
            verdict(s.redis.bytesPerDecision, GOALS.redisBytesPerDecision, false),
          ],
        ]
      : []),
    [
      'cores used: auction / simulators / load generator / other',
      `${s.cpu.auctionCores} / ${s.cpu.simulatorsCores} / ${s.cpu.loadGeneratorCores} / ${s.cpu.otherProcessesCores}`,
      '',
      '',
    ],
  ];
  const lines = [
    '| measure | value | goal | verdict |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
  if (s.profile) {
    lines.push(
      '',
      `Profile (${s.profile.windowSamples} samples in the window, ${s.profile.idleShare} % idle); shares of busy samples:`,
    );
    lines.push(
      '',
      '| package | self |',
      '|---|---|',
      ...s.profile.byPackage.map((p) => `| ${p.name} | ${p.share} % |`),
    );
    lines.push(
      '',
      '| function (self time) | share |',
      '|---|---|',
      ...s.profile.topSelf.map((f) => `| \`${f.function}\` | ${f.share} % |`),
    );
    lines.push(
      '',
      '| app function (inclusive) | share |',
      '|---|---|',
      ...s.profile.topInclusive.map((f) => `| \`${f.function}\` | ${f.share} % |`),
    );
  }
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
