import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { SpoolDirectory, toMessage, type OutgoingMessage } from '@app/events';

/**
 * What the spool's fdatasync costs. `npm run build && node dist/bench/event-spool.bench.js`:
 * appends of `--events-per-append` demo events (one publish each, as the auction's publisher sends
 * them), by 1, 16 and 128 publishers at once, with fdatasync before an append resolves (the
 * product) and without (page cache only), each into a fresh spool under `--dir`. Prints events/s
 * and the latency of one append (to its resolution: written and, if durable, synced).
 */
const { values } = parseArgs({
  options: {
    appends: { type: 'string', default: '4000' },
    'events-per-append': { type: 'string', default: '20' },
    dir: { type: 'string', default: tmpdir() },
  },
});
const APPENDS = Number(values.appends);
const PER_APPEND = Number(values['events-per-append']);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(messages: readonly OutgoingMessage[], durable: boolean, concurrency: number) {
  const dir = mkdtempSync(path.join(values.dir, 'adx-spool-bench-'));
  const spools = new SpoolDirectory({ dir, name: 'bench', maxBytes: 8 * 1024 * 1024 * 1024, durable });
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < APPENDS) {
        const at = (next++ * PER_APPEND) % (messages.length - PER_APPEND);
        const t0 = process.hrtime.bigint();
        await spools.own.append({ topic: 'adx.impression', messages: messages.slice(at, at + PER_APPEND) });
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const bytes = spools.own.pending();
  await spools.close();
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  return {
    eventsPerSecond: Math.round((APPENDS * PER_APPEND) / seconds),
    mibPerSecond: bytes / 1024 / 1024 / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

async function main(): Promise<void> {
  const messages: OutgoingMessage[] = [];
  for (const event of generateDemoTraffic(loadCatalog(), {
    days: 1,
    eventsPerDay: 20_000,
    now: new Date(),
    seed: 7,
  })) {
    messages.push(toMessage(event));
  }
  console.log(`${APPENDS} appends of ${PER_APPEND} events each, in ${values.dir}`);
  console.log('| fdatasync | publishers at once | events/s | MiB/s | append p50 | append p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const durable of [true, false]) {
    for (const concurrency of [1, 16, 128]) {
      const r = await measure(messages, durable, concurrency);
      console.log(
        `| ${durable ? 'yes' : 'no'} | ${concurrency} | ${r.eventsPerSecond.toLocaleString('en')} | ` +
          `${r.mibPerSecond.toFixed(1)} | ${r.p50.toFixed(2)} ms | ${r.p99.toFixed(2)} ms |`,
      );
    }
  }
}

void main();
