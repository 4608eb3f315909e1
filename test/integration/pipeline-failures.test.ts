import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@app/config';
import {
  EVENT_TOPICS,
  KafkaEventBus,
  TOPIC_BY_TYPE,
  toMessage,
  type AdEvent,
  type DeliveredBatch,
} from '@app/events';
import { openReportStore, type ReportStore } from '@app/report-store';
import { demoEvents, expectedBySplit, requireOrSkip } from '@app/testing';
import { IngestConfig, IngestService } from '@apps/ingest';

/**
 * The failure tests of the pipeline, on a private stack (other ports, its own data folder) so that
 * stopping a server here disturbs no other suite.
 */
const PORTS = {
  KAFKA_PORT: '29092',
  KAFKA_CONTROLLER_PORT: '29093',
  CH_HTTP_PORT: '28123',
  CH_TCP_PORT: '29000',
  REDIS_PORT: '26379',
};
const STACK_DIR = mkdtempSync(path.join(tmpdir(), 'adx-failure-stack-'));
const BROKERS = [`127.0.0.1:${PORTS.KAFKA_PORT}`];
const CLICKHOUSE = `http://127.0.0.1:${PORTS.CH_HTTP_PORT}`;

function stack(script: 'stack-up' | 'stack-down', ...services: string[]): void {
  execFileSync('bash', [`stack/${script}.sh`, ...services], {
    env: { ...process.env, STACK_DIR, ...PORTS },
    stdio: 'pipe',
    timeout: 240_000,
  });
}

function serversAvailable(): boolean {
  try {
    execFileSync(
      'bash',
      ['-c', 'command -v clickhouse-server && command -v redis-server && command -v java'],
      { stdio: 'pipe' },
    );
    return true;
  } catch {
    return false;
  }
}

let run = 0;
const unique = (what: string) => `${what}_${process.pid}_${Date.now()}_${run++}`;

function kafkaBus(
  prefix: string,
  clientId: string,
  spoolDir = mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
) {
  return new KafkaEventBus({
    brokers: BROKERS,
    clientId,
    topicPrefix: prefix,
    partitions: 4,
    spoolDir,
    spoolMaxBytes: 256 * 1024 * 1024,
    concurrentPartitions: 2,
  });
}

function clickhouseStore(): Promise<ReportStore> {
  return openReportStore({
    kind: 'clickhouse',
    url: CLICKHOUSE,
    database: unique('adx_failure'),
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 10_000,
    rawRetentionMonths: 120,
  });
}

async function publish(bus: KafkaEventBus, events: readonly AdEvent[]): Promise<void> {
  for (const type of Object.keys(TOPIC_BY_TYPE) as (keyof typeof TOPIC_BY_TYPE)[]) {
    const ofType = events.filter((e) => e.type === type).map(toMessage);
    for (let i = 0; i < ofType.length; i += 500) {
      await bus.publish(TOPIC_BY_TYPE[type], ofType.slice(i, i + 500));
    }
  }
}

/** Every exact count by day, from the store and straight from the events. */
async function byDay(store: ReportStore) {
  const rows = await store.query({
    range: { start: '2026-01-01', end: '2026-12-31' },
    split: 'day',
    filters: [],
    scope: {},
    tier: 'exact',
  });
  return Object.fromEntries(rows.map((r) => [r.key, r.measures]));
}

function expectedByDay(events: readonly AdEvent[]) {
  return Object.fromEntries([...expectedBySplit(events, 'day')].map(([day, counts]) => [day, counts]));
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) {
      return;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('condition not met in time');
}

function ingestFor(bus: KafkaEventBus, store: ReportStore): IngestService {
  return new IngestService(bus, store, loadConfig(IngestConfig, {}));
}

describe.runIf(
  requireOrSkip(serversAvailable(), 'clickhouse-server, redis-server and java for the private failure stack'),
)('pipeline failures on real Kafka and ClickHouse', () => {
  beforeAll(() => stack('stack-up'), 240_000);
  afterAll(() => stack('stack-down'), 120_000);

  it('an ingest killed between the ClickHouse insert and the offset commit: the replay changes no report', async () => {
    const prefix = `${unique('crash')}.`;
    const group = unique('ingest');
    const store = await clickhouseStore();
    const events = demoEvents(3, 2000);
    const producer = kafkaBus(prefix, unique('producer'));
    await publish(producer, events);

    const doomed = kafkaBus(prefix, unique('doomed'));
    const firstLife = ingestFor(doomed, store);
    let handled = 0;
    let killed!: () => void;
    const dead = new Promise<void>((resolve) => (killed = resolve));
    await doomed.subscribe(group, EVENT_TOPICS, async (batch: DeliveredBatch) => {
      await firstLife.handle(batch);
      handled += 1;
      if (handled === 3) {
        killed();
        throw new Error('killed after the insert, before the offset commit');
      }
    });
    await dead;
    await doomed.close();
    const stored = await byDay(store);
    expect(Object.keys(stored).length).toBeGreaterThan(0);

    const restarted = kafkaBus(prefix, unique('restarted'));
    const secondLife = ingestFor(restarted, store);
    await restarted.subscribe(group, EVENT_TOPICS, (batch) => secondLife.handle(batch));
    await restarted.drain();
    expect(await byDay(store)).toEqual(expectedByDay(events));
    await Promise.all([restarted.close(), producer.close(), store.close()]);
  });

  it('Kafka stopped while events are produced: they wait in the spool, then every event arrives once', async () => {
    const prefix = `${unique('kafka-down')}.`;
    const store = await clickhouseStore();
    const events = demoEvents(2, 3000);
    const half = Math.floor(events.length / 2);
    const spoolDir = mkdtempSync(path.join(tmpdir(), 'adx-spool-'));
    const producer = kafkaBus(prefix, unique('producer'), spoolDir);
    const consumer = kafkaBus(prefix, unique('consumer'));
    const ingest = ingestFor(consumer, store);
    await consumer.subscribe(unique('ingest'), EVENT_TOPICS, (batch) => ingest.handle(batch));

    await publish(producer, events.slice(0, half));
    stack('stack-down', 'kafka');
    await publish(producer, events.slice(half));
    const spooled = readdirSync(spoolDir).reduce((sum, f) => sum + statSync(path.join(spoolDir, f)).size, 0);
    expect(spooled).toBeGreaterThan(0);

    stack('stack-up');
    await producer.drain();
    await until(async () =>
      readdirSync(spoolDir).every(
        (f) => !existsSync(path.join(spoolDir, f)) || statSync(path.join(spoolDir, f)).size === 0,
      ),
    );
    await consumer.drain();
    expect(await byDay(store)).toEqual(expectedByDay(events));
    await Promise.all([consumer.close(), producer.close(), store.close()]);
  });

  it('ClickHouse stopped while the ingest runs: it retries without committing, then nothing is lost', async () => {
    const prefix = `${unique('ch-down')}.`;
    const store = await clickhouseStore();
    const events = demoEvents(2, 3000);
    const producer = kafkaBus(prefix, unique('producer'));
    const consumer = kafkaBus(prefix, unique('consumer'));
    const ingest = ingestFor(consumer, store);
    await consumer.subscribe(unique('ingest'), EVENT_TOPICS, (batch) => ingest.handle(batch));

    await publish(producer, events.slice(0, 1000));
    await until(async () => Object.keys(await byDay(store)).length > 0);
    stack('stack-down', 'clickhouse');
    await publish(producer, events.slice(1000));
    await new Promise((r) => setTimeout(r, 3_000));
    await expect(consumer.drain(2_000)).rejects.toThrow(/did not drain/);

    stack('stack-up');
    await consumer.drain();
    expect(await byDay(store)).toEqual(expectedByDay(events));
    await Promise.all([consumer.close(), producer.close(), store.close()]);
  });
});
