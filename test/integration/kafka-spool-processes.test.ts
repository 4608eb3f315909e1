import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { KafkaEventBus } from '@app/events';
import { STACK, freePort, requireOrSkip, waitUntil } from '@app/testing';

/**
 * The spool across processes, on the Kafka of `npm run stack:up`: producer processes on the apps'
 * default settings (client id `adx`, spool `data/spool` in a shared working folder), started with
 * Kafka unreachable (a port nothing listens on), killed with SIGKILL, and restarted on the real
 * broker. Every acknowledged event must reach the topic (at least once: counted by distinct id).
 */
const ROOT = path.resolve(__dirname, '../..');
const BROKERS = STACK.kafkaBrokers;
let compiled = '';
let child = '';
let unreachable = '';

interface Running {
  readonly process: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
}

const running: Running[] = [];
let run = 0;
const unique = (what: string) => `${what}-${process.pid}-${Date.now()}-${run++}`;

/** The producer script on the apps' settings, in `cwd` (so that `data/spool` is shared by its processes). */
function producer(cwd: string, brokers: string, prefix: string, args: string[]): Running {
  const started = spawn(process.execPath, [child, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      NODE_PATH: path.join(ROOT, 'node_modules'),
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: prefix,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  started.stdout.on('data', collect);
  started.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
  const result = { process: started, lines, exited };
  running.push(result);
  return result;
}

const said = (p: Running, key: string) => p.lines.some((line) => line.startsWith(`{"${key}"`));

async function kill(p: Running): Promise<void> {
  p.process.kill('SIGKILL');
  await p.exited;
}

/** Distinct event ids on the topic, read by a consumer group of its own, once `expected` are there. */
async function idsOnTopic(prefix: string, topic: string, expected: number): Promise<Set<string>> {
  const reader = new KafkaEventBus({
    brokers: BROKERS.split(','),
    clientId: unique('reader'),
    topicPrefix: prefix,
    partitions: 4,
    spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-reader-')),
    spoolMaxBytes: 1024 * 1024,
    concurrentPartitions: 2,
  });
  const ids = new Set<string>();
  try {
    await reader.subscribe(unique('reader'), [topic], async (batch) => {
      for (const m of batch.messages) {
        ids.add((JSON.parse(m.value) as { event_id: string }).event_id);
      }
    });
    await waitUntil(`${expected} distinct events on ${topic}`, () => ids.size >= expected, {
      timeoutMs: 40_000,
      everyMs: 100,
    });
  } catch {
    // The caller compares the count.
  } finally {
    await reader.close();
  }
  return ids;
}

function spoolFiles(cwd: string): Record<string, number> {
  const dir = path.join(cwd, 'data/spool');
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith('.spool.jsonl'))
      .map((f) => [f, statSync(path.join(dir, f)).size]),
  );
}

describe.runIf(requireOrSkip(inject('stack').kafka, `Kafka at ${BROKERS} (npm run stack:up)`))(
  'Kafka spool across producer processes',
  () => {
    beforeAll(async () => {
      compiled = mkdtempSync(path.join(tmpdir(), 'adx-spool-child-'));
      execFileSync(
        process.execPath,
        [
          path.join(ROOT, 'node_modules/@swc/cli/bin/swc.js'),
          'libs',
          'test/support/spool-producer.child.ts',
          '-d',
          compiled,
          '--quiet',
        ],
        { cwd: ROOT, stdio: 'pipe' },
      );
      child = path.join(compiled, 'test/support/spool-producer.child.js');
      unreachable = `127.0.0.1:${await freePort()}`;
    }, 60_000);

    afterEach(async () => {
      await Promise.all(running.splice(0).map(kill));
    });

    afterAll(async () => {
      await Promise.all(running.splice(0).map(kill));
      rmSync(compiled, { recursive: true, force: true });
    });

    it('two processes, same client id and spool folder, Kafka down, both killed: every acknowledged event arrives', async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), 'adx-spool-two-'));
      const prefix = `${unique('two')}.`;
      const n = 2000;
      const first = producer(cwd, unreachable, prefix, ['publish', 'adx.click', 'first', String(n)]);
      const second = producer(cwd, unreachable, prefix, ['publish', 'adx.click', 'second', String(n)]);
      await waitUntil(
        'both to be acknowledged',
        () => said(first, 'published') && said(second, 'published'),
        { timeoutMs: 40_000, everyMs: 50 },
      );
      // Kafka stays down past the replay timer's ticks: the processes must live on.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(first.process.exitCode).toBeNull();
      expect(second.process.exitCode).toBeNull();
      await Promise.all([kill(first), kill(second)]);
      // One spool each: never the same file.
      const files = spoolFiles(cwd);
      expect(Object.keys(files).sort()).toEqual(['adx@0.spool.jsonl', 'adx@1.spool.jsonl']);
      expect(Object.values(files).every((size) => size > 0)).toBe(true);

      const restarted = [
        producer(cwd, BROKERS, prefix, ['drain']),
        producer(cwd, BROKERS, prefix, ['drain']),
      ];
      await waitUntil('the restarted processes to drain', () => restarted.every((p) => said(p, 'drained')), {
        timeoutMs: 40_000,
        everyMs: 50,
      });
      expect(await Promise.all(restarted.map((p) => p.exited))).toEqual([0, 0]);
      const ids = await idsOnTopic(prefix, 'adx.click', 2 * n);
      expect(ids.size).toBe(2 * n);
      expect(Object.values(spoolFiles(cwd)).every((size) => size === 0)).toBe(true);
    }, 60_000);

    it('a producer started while Kafka is down: publish resolves from the spool; a later process sends it', async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), 'adx-spool-boot-'));
      const prefix = `${unique('boot')}.`;
      const down = producer(cwd, unreachable, prefix, ['publish', 'adx.impression', 'boot', '100']);
      await waitUntil('publish to resolve with Kafka down', () => said(down, 'published'), {
        timeoutMs: 40_000,
        everyMs: 50,
      });
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(down.process.exitCode).toBeNull();
      expect(down.lines.some((line) => line.includes('ECONNREFUSED') && line.includes('spooling'))).toBe(
        true,
      );
      await kill(down);

      const up = producer(cwd, BROKERS, prefix, ['drain']);
      await waitUntil('the spool to drain', () => said(up, 'drained'), { timeoutMs: 40_000, everyMs: 50 });
      const ids = await idsOnTopic(prefix, 'adx.impression', 100);
      expect(ids.size).toBe(100);
    }, 60_000);

    it('a replay killed with SIGKILL midway loses nothing: the next process resends from its cursor', async () => {
      const cwd = mkdtempSync(path.join(tmpdir(), 'adx-spool-replay-'));
      const prefix = `${unique('replay')}.`;
      const n = 30_000;
      const down = producer(cwd, unreachable, prefix, ['publish', 'adx.auction', 'replay', String(n)]);
      await waitUntil('the events to be spooled', () => said(down, 'published'), {
        timeoutMs: 40_000,
        everyMs: 50,
      });
      await kill(down);

      const cursor = path.join(cwd, 'data/spool/adx@0.cursor');
      const doomed = producer(cwd, BROKERS, prefix, ['drain']);
      // A cursor means some batches reached Kafka and the rest wait: the replay is midway.
      await waitUntil('the replay to start', () => existsSync(cursor), { timeoutMs: 40_000, everyMs: 5 });
      await kill(doomed);
      expect(said(doomed, 'drained')).toBe(false);
      expect(spoolFiles(cwd)['adx@0.spool.jsonl']).toBeGreaterThan(0);

      const next = producer(cwd, BROKERS, prefix, ['drain']);
      await waitUntil('the rest of the spool to drain', () => said(next, 'drained'), {
        timeoutMs: 40_000,
        everyMs: 50,
      });
      const ids = await idsOnTopic(prefix, 'adx.auction', n);
      expect(ids.size).toBe(n);
    }, 60_000);
  },
);
