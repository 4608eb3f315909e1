import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { TOPIC_BY_TYPE, toMessage, type AdEvent, type EventBus } from '@app/events';
import type { ClickHouseReportStore } from '@app/report-store';
import { IngestProcess, expectedBySplit, waitUntil, type ClusterStack } from '@app/testing';

/** What the cluster's fault tests (test/cluster/) share beside `ClusterStack`: a node's SQL, the events published. */

/** A ClickHouse node of the cluster: 1-2 shard 01, 3-4 shard 02. */
export type ClusterClickHouseNode = 1 | 2 | 3 | 4;

/**
 * A query on one node, in `database` there (its local tables) unless it names another; the lines of
 * its answer. `stack` is read at each call (the tests make it in `beforeAll`).
 */
export function clusterNodeSql(stack: () => ClusterStack, database: string) {
  return async (node: ClusterClickHouseNode, query: string, db = database): Promise<string[]> => {
    const response = await fetch(`${stack().clickhouseUrl(node)}/?database=${db}`, {
      method: 'POST',
      body: query,
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`${query}: ${text}`);
    }
    return text.split('\n').filter(Boolean);
  };
}

/**
 * The built ingest app on the cluster, as the fault tests run it, once healthy: on the test's topics
 * (`topicPrefix`, replicated on the three brokers, created by the ingest at subscription) in `group`,
 * storing into `database` through the cluster, sealing every 500 ms, with a spool of its own; `env`
 * adds or overrides variables. `kafkaEnv` is what the test's other apps and buses share with it.
 */
export async function startClusterIngest(
  stack: ClusterStack,
  options: { topicPrefix: string; group: string; database: string; env?: Readonly<Record<string, string>> },
): Promise<{ ingest: IngestProcess; kafkaEnv: Record<string, string> }> {
  const kafkaEnv = {
    KAFKA_BROKERS: stack.kafkaBrokers.join(','),
    KAFKA_TOPIC_PREFIX: options.topicPrefix,
    KAFKA_REPLICATION_FACTOR: '3',
  };
  const ingest = await IngestProcess.start({
    ...kafkaEnv,
    LOG_LEVEL: 'warn',
    INGEST_GROUP_ID: options.group,
    KAFKA_CLIENT_ID: `${options.group}-ingest`,
    KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-cluster-ingest-spool-')),
    ...stack.storeEnv(options.database),
    SEAL_INTERVAL_MS: '500',
    ...options.env,
  });
  await waitUntil('the ingest healthy', async () => (await ingest.health()) === 200, {
    timeoutMs: 90_000,
    retryErrors: true,
  });
  return { ingest, kafkaEnv };
}

/** Publishes events through the bus, each on its type's topic. */
export async function publishEvents(bus: EventBus, events: readonly AdEvent[]): Promise<void> {
  const byTopic = new Map<string, ReturnType<typeof toMessage>[]>();
  for (const event of events) {
    const topic = TOPIC_BY_TYPE[event.type];
    byTopic.set(topic, [...(byTopic.get(topic) ?? []), toMessage(event)]);
  }
  await Promise.all([...byTopic].map(([topic, messages]) => bus.publish(topic, messages)));
}

/** Whether `a` deeply equals `b`, as `toEqual` judges it (for polling until it does). */
export function deepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}

/** The exact report by campaign over `range`, as `key → measures`. */
export async function exactByCampaign(
  store: ClickHouseReportStore,
  range: { start: string; end: string },
): Promise<Record<string, unknown>> {
  const rows = await store.query({ range, split: 'campaign_id', filters: [], scope: {}, tier: 'exact' });
  return Object.fromEntries(rows.map((r) => [r.key, r.measures]));
}

/**
 * Waits until the closed days' exact report by campaign over `range` equals the hand count of
 * `events` (the ingest seals them on its own time), then asserts it: on a timeout the assertion
 * shows the last report against the hand count.
 */
export async function expectSealedToHandCount(
  store: ClickHouseReportStore,
  range: { start: string; end: string },
  events: readonly AdEvent[],
  timeoutMs: number,
): Promise<void> {
  const truth = Object.fromEntries(expectedBySplit(events, 'campaign_id'));
  const byCampaign = () => exactByCampaign(store, range);
  const report = await waitUntil(
    'the closed days sealed to the hand count',
    async () => {
      const now = await byCampaign();
      return deepEqual(now, truth) ? now : undefined;
    },
    { timeoutMs, retryErrors: true },
  ).catch(byCampaign);
  expect(report).toEqual(truth);
}
