import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVENT_TOPICS,
  KafkaEventBus,
  TOPIC_BY_TYPE,
  toMessage,
  type AdEvent,
  type DeliveredBatch,
} from '@app/events';
import { openReportStore, type ReportStore } from '@app/report-store';
import {
  PrivateStack,
  demoEvents,
  expectedBySplit,
  requireOrSkip,
  stackServersInstalled,
  waitUntil,
} from '@app/testing';
import { IngestService } from '@apps/ingest';

/**
 * The failure tests of the pipeline, on a private stack (free ports, or PRIVATE_* from the
 * environment, and its own data folder) so that stopping a server here disturbs no other suite.
 */
let stack: PrivateStack;
let BROKERS: string[];
let CLICKHOUSE: string;

/** Every day of the demo events is closed then. */
const AFTER_THE_EVENTS = new Date('2026-11-22T12:00:00.000Z');

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

/** Bytes in the spool folder; files may come and go (locks, replays) while it is read. */
function spooledBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, f) => {
    try {
      return sum + statSync(path.join(dir, f)).size;
    } catch {
      return sum;
    }
  }, 0);
}

/**
 * The store, and what its `ingest` answered to one life of an ingest, summed: the events it wrote
 * and those it left out as already stored (the store's own account, whatever the ingest does).
 */
function counting(store: ReportStore): { store: ReportStore; totals: { stored: number; skipped: number } } {
  const totals = { stored: 0, skipped: 0 };
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'ingest') {
        return async (...args: Parameters<ReportStore['ingest']>) => {
          const result = await target.ingest(...args);
          totals.stored += result.stored;
          totals.skipped += result.skipped;
          return result;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, totals };
}

function ingestFor(bus: KafkaEventBus, store: ReportStore): IngestService {
  return new IngestService(bus, store);
}

describe.runIf(
  requireOrSkip(
    stackServersInstalled(),
    'clickhouse-server, redis-server and java for the private failure stack',
  ),
)('pipeline failures on real Kafka and ClickHouse', () => {
  beforeAll(async () => {
    stack = await PrivateStack.create('failure');
    BROKERS = stack.kafkaBrokers;
    CLICKHOUSE = stack.clickhouseUrl;
    stack.up('kafka', 'clickhouse');
  }, 240_000);
  afterAll(() => stack?.down(), 120_000);

  it('an ingest killed between the ClickHouse insert and the offset commit: the restart skips what was stored, and the replay changes no report', async () => {
    const prefix = `${unique('crash')}.`;
    const group = unique('ingest');
    const store = await clickhouseStore();
    const events = demoEvents(3, 2000);
    const producer = kafkaBus(prefix, unique('producer'));
    await publish(producer, events);

    // The first life dies after its third batch is stored and before that batch's offset is
    // committed (the handler's failure keeps Kafka's offset where it was); a dead process stores
    // and commits nothing more, so every batch that comes after fails before the store.
    const doomed = kafkaBus(prefix, unique('doomed'));
    const firstLife = counting(store);
    const firstIngest = ingestFor(doomed, firstLife.store);
    let handled = 0;
    let dead = false;
    let killed!: () => void;
    const died = new Promise<void>((resolve) => (killed = resolve));
    // Batches of other partitions under way at the kill end their insert, not their commit: the
    // close waits for them, so that the store's answers to this life are all counted.
    const underWay = new Set<Promise<void>>();
    await doomed.subscribe(group, EVENT_TOPICS, async (batch: DeliveredBatch) => {
      if (dead) {
        throw new Error('the process is dead');
      }
      const handling = firstIngest.handle(batch);
      underWay.add(handling);
      await handling.finally(() => underWay.delete(handling));
      handled += 1;
      if (handled >= 3 || dead) {
        dead = true;
        killed();
        throw new Error('killed after the insert, before the offset commit');
      }
    });
    await died;
    await Promise.allSettled([...underWay]);
    await doomed.close();

    // The fault took effect: part of the events stored, the rest missing, and stored events
    // whose offsets Kafka does not have (the restart must be handed them again).
    expect(firstLife.totals.stored).toBeGreaterThan(0);
    expect(firstLife.totals.stored).toBeLessThan(events.length);
    expect(await byDay(store)).not.toEqual(expectedByDay(events));

    const restarted = kafkaBus(prefix, unique('restarted'));
    const secondLife = counting(store);
    const secondIngest = ingestFor(restarted, secondLife.store);
    await restarted.subscribe(group, EVENT_TOPICS, (batch) => secondIngest.handle(batch));
    await restarted.drain();
    // The replay: events delivered again and left out by their stored offsets, each event
    // stored by exactly one life.
    console.log(
      JSON.stringify({
        first: firstLife.totals,
        second: secondLife.totals,
        events: events.length,
        types: [...new Set(events.map((e) => e.type))],
      }),
    );
    expect(secondLife.totals.skipped).toBeGreaterThan(0);
    expect(secondLife.totals.skipped).toBeLessThanOrEqual(firstLife.totals.stored);
    expect(firstLife.totals.stored + secondLife.totals.stored).toBe(events.length);
    // Nothing counted twice even before a seal, and the same once sealed.
    expect(await byDay(store)).toEqual(expectedByDay(events));
    await store.seal(AFTER_THE_EVENTS);
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
    stack.down('kafka');
    await publish(producer, events.slice(half));
    const spooled = spooledBytes(spoolDir);
    expect(spooled).toBeGreaterThan(0);

    stack.up('kafka', 'clickhouse');
    await producer.drain();
    await waitUntil('the spool replayed', async () => spooledBytes(spoolDir) === 0, {
      timeoutMs: 60_000,
      retryErrors: true,
    });
    await consumer.drain();
    await store.seal(AFTER_THE_EVENTS);
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
    await waitUntil('the first events stored', async () => Object.keys(await byDay(store)).length > 0, {
      timeoutMs: 60_000,
      retryErrors: true,
    });
    stack.down('clickhouse');
    await publish(producer, events.slice(1000));
    await new Promise((r) => setTimeout(r, 3_000));
    await expect(consumer.drain(2_000)).rejects.toThrow(/did not drain/);

    stack.up('kafka', 'clickhouse');
    await consumer.drain();
    await store.seal(AFTER_THE_EVENTS);
    expect(await byDay(store)).toEqual(expectedByDay(events));
    await Promise.all([consumer.close(), producer.close(), store.close()]);
  });
});
