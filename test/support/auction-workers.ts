import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import Redis from 'ioredis';
import { STACK, freePort, waitUntil } from '@app/testing';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'dist/apps/auction/src/main.js');

/** The built auction running `workers` processes under one primary, sharing the stack's Redis. */
export interface AuctionWorkers {
  readonly process: ChildProcess;
  readonly url: string;
  /** Every log line of the primary and the workers so far. */
  readonly lines: string[];
  readonly exited: Promise<number | null>;
  /** Kills the primary (SIGKILL) and drops the run's Redis keys. */
  stop(): Promise<void>;
}

/**
 * Builds the apps and starts the auction as it runs in production: AUCTION_WORKERS processes on
 * one port, their state in Redis under `prefix`; resolves once every worker listens. `env` adds
 * to (or overrides) the settings.
 */
export async function startAuctionWorkers(options: {
  readonly catalog: string;
  readonly prefix: string;
  readonly workers?: number;
  readonly env?: Record<string, string>;
}): Promise<AuctionWorkers> {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
  const workers = options.workers ?? 2;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH,
      AUCTION_PORT: String(port),
      AUCTION_PUBLIC_URL: url,
      AUCTION_WORKERS: String(workers),
      // A loaded test machine's lag is not what these tests are about.
      AUCTION_SHED_LAG_MS: '0',
      CATALOG_PATH: options.catalog,
      REDIS_URL: STACK.redisUrl,
      REDIS_KEY_PREFIX: options.prefix,
      LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitUntil(
    `${workers} workers listening`,
    () => lines.filter((l) => l.includes('"listening"')).length === workers,
    { timeoutMs: 60_000 },
  );
  return {
    process: child,
    url,
    lines,
    exited,
    stop: async () => {
      child.kill('SIGKILL');
      const redis = new Redis(STACK.redisUrl);
      const keys = await redis.keys(`${options.prefix}*`);
      if (keys.length > 0) {
        await redis.unlink(...keys);
      }
      redis.disconnect();
    },
  };
}
