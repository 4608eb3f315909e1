import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KafkaEventBus, TOPIC_BY_TYPE, toMessage, type AdEvent } from '@app/events';
import type { ClickHouseReportStore } from '@app/report-store';
import { STACK, demoEvents, expectedBySplit, requireOrSkip, testClickHouseStore } from '@app/testing';

const ROOT = path.resolve(__dirname, '../..');
const INGEST = path.join(ROOT, 'dist/apps/ingest/src/main.js');
const RANGE = { start: '2026-01-01', end: '2026-11-21' };

/**
 * Two ingest processes of one group on one host, as an operator runs them, over the stack's Kafka
 * and ClickHouse: one is killed with SIGKILL while it inserts, then started again. The reports must
 * equal a hand count once the ingests' own sealers have run, with no help from the test.
 */
describe.runIf(
  requireOrSkip(
    inject('stack').kafka && inject('stack').clickhouse,
    'Kafka and ClickHouse (npm run stack:up)',
  ),
)('ingest processes killed with SIGKILL', () => {
  const id = `${process.pid}_${Date.now()}`;
  const database = `adx_test_${id}_kill`;
  const prefix = `kill-${id}.`;
  const children: ChildProcess[] = [];

  function ingestProcess(name: string): ChildProcess {
    const child = spawn(process.execPath, [INGEST], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        LOG_LEVEL: 'warn',
        INGEST_PORT: '0',
        INGEST_GROUP_ID: `kill-${id}`,
        KAFKA_BROKERS: STACK.kafkaBrokers,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_CLIENT_ID: `kill-${name}-${id}`,
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
        CLICKHOUSE_URL: STACK.clickhouseUrl,
        CLICKHOUSE_DATABASE: database,
        SEAL_INTERVAL_MS: '500',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    return child;
  }

  beforeAll(() => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
  }, 120_000);

  afterAll(() => {
    for (const child of children) {
      child.kill('SIGKILL');
    }
  });

  it('kill -9 of one of two ingests mid-way and a restart: exact once the ingests have sealed', async () => {
    const events = demoEvents(3, 8000);
    const producer = new KafkaEventBus({
      brokers: STACK.kafkaBrokers.split(','),
      clientId: `kill-producer-${id}`,
      topicPrefix: prefix,
      partitions: 4,
      spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
      spoolMaxBytes: 256 * 1024 * 1024,
      concurrentPartitions: 2,
    });
    await publish(producer, events);
    const store = testClickHouseStore(database);
    await store.migrate();

    const victim = ingestProcess('a');
    ingestProcess('b');
    await until(async () => (await rawRows()) > 2_000, 60_000);
    victim.kill('SIGKILL');
    const restartedAt = Date.now();
    ingestProcess('a');

    const truth = Object.fromEntries(expectedBySplit(events, 'campaign_id'));
    await until(async () => equal(await byCampaign(store), truth), 90_000);
    console.log(`exact ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart`);
    expect(await byCampaign(store)).toEqual(truth);
    await producer.close();
    await store.close();
  }, 180_000);

  async function rawRows(): Promise<number> {
    const response = await fetch(`${STACK.clickhouseUrl}/`, {
      method: 'POST',
      body: `SELECT count() FROM ${database}.events_raw`,
    });
    return response.ok ? Number(await response.text()) : 0;
  }
});

async function publish(bus: KafkaEventBus, events: readonly AdEvent[]): Promise<void> {
  for (const [type, topic] of Object.entries(TOPIC_BY_TYPE)) {
    const messages = events.filter((e) => e.type === type).map(toMessage);
    for (let i = 0; i < messages.length; i += 500) {
      await bus.publish(topic, messages.slice(i, i + 500));
    }
  }
}

async function byCampaign(store: ClickHouseReportStore): Promise<Record<string, unknown>> {
  const rows = await store.query({
    range: RANGE,
    split: 'campaign_id',
    filters: [],
    scope: {},
    tier: 'exact',
  });
  return Object.fromEntries(rows.map((r) => [r.key, r.measures]));
}

function equal(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
