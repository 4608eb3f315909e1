import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '@app/testing';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'dist/apps/main/src/main.js');

interface Running {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start`'s process on its own DuckDB file and free ports, its log lines collected. */
function start(dataDir: string): Running {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DUCKDB_PATH: path.join(dataDir, 'adx.duckdb'),
      REPORTING_PORT: '0',
      INGEST_PORT: '0',
      AUCTION_PORT: '0',
      DEMO_DSPS: '0',
      SEED_ON_EMPTY_DAYS: '3',
      SEED_EVENTS_PER_DAY: '500',
      SEED_AUCTION_OPENS: '30',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited };
}

/** Today's impressions in the exact tier of a stopped process's DuckDB file. */
async function impressionsToday(file: string): Promise<number> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const connection = await instance.connect();
  try {
    const today = new Date().toISOString().slice(0, 10);
    const reader = await connection.runAndReadAll(
      `SELECT coalesce(sum(unique_impressions + reopens), 0) FROM exact_daily WHERE day = CAST('${today}' AS DATE)`,
    );
    return Number(reader.getRows()[0][0]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const said = (running: Running, msg: string) => running.lines.some((line) => line.includes(`"msg":"${msg}`));

describe('npm start: SIGTERM stops it cleanly, and a restart finds its data', () => {
  let dataDir: string;
  let current: Running | undefined;

  beforeAll(() => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    dataDir = mkdtempSync(path.join(tmpdir(), 'adx-shutdown-'));
  }, 120_000);

  afterAll(() => {
    current?.child.kill('SIGKILL');
  });

  it('exits 0 on SIGTERM, with the DuckDB file checkpointed (no WAL left)', async () => {
    current = start(dataDir);
    await waitUntil('the first start to be ready', () => said(current!, 'ready'), { timeoutMs: 90_000 });
    expect(said(current, 'empty store: seeding demo traffic')).toBe(true);
    current.child.kill('SIGTERM');
    expect(await current.exited).toEqual({ code: 0, signal: null });
    expect(readdirSync(dataDir).filter((f) => f.endsWith('.wal'))).toEqual([]);
  }, 120_000);

  it('SIGTERM right after the last answered ad request: every served impression is stored before it exits', async () => {
    current = start(dataDir);
    await waitUntil('the start to be ready', () => said(current!, 'ready'), { timeoutMs: 90_000 });
    const ready = current.lines
      .map((line) => JSON.parse(line) as { msg?: string; auction?: string })
      .find((line) => line.msg === 'ready');
    const served = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const response = await fetch(
          `${ready!.auction}/img/slot-1-1-1?placement=plc-shutdown&recipient=shutdown-${i}&cb=${i}`,
          { redirect: 'manual' },
        );
        await response.arrayBuffer();
        return response.status === 302;
      }),
    );
    current.child.kill('SIGTERM');
    expect(await current.exited).toEqual({ code: 0, signal: null });
    expect(served.filter(Boolean)).toHaveLength(200);
    expect(await impressionsToday(path.join(dataDir, 'adx.duckdb'))).toBe(200);
  }, 120_000);

  it('restarts on the same file without seeding again, and stops cleanly again', async () => {
    expect(existsSync(path.join(dataDir, 'adx.duckdb'))).toBe(true);
    current = start(dataDir);
    await waitUntil('the restart to be ready', () => said(current!, 'ready'), { timeoutMs: 60_000 });
    expect(said(current, 'empty store: seeding demo traffic')).toBe(false);
    current.child.kill('SIGTERM');
    expect(await current.exited).toEqual({ code: 0, signal: null });
  }, 90_000);
});
