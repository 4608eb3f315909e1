import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { STACK, requireOrSkip } from '@app/testing';

/**
 * Two auction processes at full speed on one small goal, on the Redis of `npm run stack:up`: the
 * booking's delivery counters must not let them pass the goal by more than 1 %.
 */
const ROOT = path.resolve(__dirname, '../..');
let compiled = '';

function racer(
  prefix: string,
  goal: number,
  startAt: number,
): Promise<{ delivered: number; refusedAtCommit: number }> {
  const child = spawn(
    process.execPath,
    [
      path.join(compiled, 'test/support/booking-racer.child.js'),
      STACK.redisUrl,
      prefix,
      String(goal),
      String(startAt),
    ],
    {
      env: { PATH: process.env.PATH, NODE_PATH: path.join(ROOT, 'node_modules') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      try {
        if (code !== 0) {
          throw new Error(`racer exited ${code}: ${out}`);
        }
        resolve(JSON.parse(out.trim().split('\n').pop()!));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
}

describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'booked goal raced by two processes',
  () => {
    const prefix = `adx-test-booking-${process.pid}-${Date.now()}:`;
    const redis = new Redis(STACK.redisUrl, { keyPrefix: prefix, lazyConnect: true });

    beforeAll(() => {
      compiled = mkdtempSync(path.join(tmpdir(), 'adx-booking-racer-'));
      execFileSync(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/@swc/cli/bin/swc.js'),
          'libs',
          'test/support/booking-racer.child.ts',
          '-d',
          compiled,
          '--copy-files',
          '--quiet',
        ],
        { cwd: ROOT, stdio: 'pipe' },
      );
    }, 60_000);

    afterAll(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) {
        await new Redis(STACK.redisUrl).del(...keys).catch(() => undefined);
      }
      redis.disconnect();
      rmSync(compiled, { recursive: true, force: true });
    });

    it('delivers the goal, at most 1 % over, across both processes', async () => {
      const goal = 500;
      const startAt = Date.now() + 2_000;
      const [a, b] = await Promise.all([racer(prefix, goal, startAt), racer(prefix, goal, startAt)]);
      const total = a.delivered + b.delivered;
      // Both really raced: each took part of the goal, and some of their commits lost the race.
      expect(a.delivered).toBeGreaterThan(0);
      expect(b.delivered).toBeGreaterThan(0);
      expect(total).toBeGreaterThanOrEqual(goal);
      expect(total).toBeLessThanOrEqual(goal * 1.01);
      expect(Number(await redis.get('c:cmp-1-1-1:impressions:life'))).toBe(total);
    });
  },
);
