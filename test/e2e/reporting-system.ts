import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_CATALOG_PATH } from '@app/catalog';
import { toMessage, TOPIC_BY_TYPE, type AdEvent } from '@app/events';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import { inject } from 'vitest';
import { FIXED_NOW, ReportClient, STACK, requireOrSkip } from '@app/testing';
import { startEmbeddedSystem, type EmbeddedSystem } from '@apps/main';

export const USERS = {
  pub: { id: 'demo-pub', token: 'demo-pub-token' },
  pub2: { id: 'demo-pub-2', token: 'demo-pub-2-token' },
  adv: { id: 'demo-adv', token: 'demo-adv-token' },
  lite: { id: 'demo-adv-lite', token: 'demo-adv-lite-token' },
  disabled: { id: 'test-disabled', token: 'test-disabled-token' },
  suspended: { id: 'test-suspended', token: 'test-suspended-token' },
  noApi: { id: 'test-noapi', token: 'test-noapi-token' },
} as const;

/**
 * The demo catalog plus the users that only tests need: disabled, suspended, without API access.
 * `change` edits the document before it is written (DSP endpoints of a test's simulators).
 */
export function writeTestCatalog(change: (doc: any) => void = () => undefined): string {
  const doc = JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8'));
  doc.accounts.push({
    id: 'acc-pub-suspended',
    name: 'Suspended Publisher',
    kind: 'publisher',
    status: 'suspended',
  });
  const user = (id: string, accountId: string, extra: object = {}) => ({
    id,
    accountId,
    token: `${id}-token`,
    variant: 'full',
    status: 'active',
    apiAccess: true,
    ...extra,
  });
  doc.users.push(
    user('test-disabled', 'acc-pub-1', { status: 'disabled' }),
    user('test-suspended', 'acc-pub-suspended'),
    user('test-noapi', 'acc-pub-1', { apiAccess: false }),
  );
  change(doc);
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'adx-catalog-')), 'catalog.json');
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

export type Mode = 'embedded' | 'distributed';

/**
 * Every e2e suite runs on the embedded adapters, and again on Kafka, ClickHouse and Redis when
 * `npm run stack:up` has started them (under CI they must be there).
 */
export function modes(): Mode[] {
  const stack = inject('stack');
  const all = stack.kafka && stack.clickhouse && stack.redis;
  return requireOrSkip(all, 'Kafka, ClickHouse and Redis (npm run stack:up) for the distributed e2e runs')
    ? ['embedded', 'distributed']
    : ['embedded'];
}

let systems = 0;

/** Fresh names on the shared servers, so that runs never see one another's data. */
function distributedEnv(): Record<string, string> {
  const id = `${process.pid}_${Date.now()}_${systems++}`;
  return {
    CLICKHOUSE_URL: STACK.clickhouseUrl,
    CLICKHOUSE_DATABASE: `adx_test_${id}`,
    KAFKA_BROKERS: STACK.kafkaBrokers,
    KAFKA_TOPIC_PREFIX: `test.${id}.`,
    KAFKA_CLIENT_ID: `e2e-${id}`,
    KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
    INGEST_GROUP_ID: `ingest-${id}`,
    REDIS_URL: STACK.redisUrl,
    REDIS_KEY_PREFIX: `test:${id}:`,
  };
}

export interface RunningReporting {
  readonly system: EmbeddedSystem;
  readonly client: ReportClient;
  readonly baseUrl: string;
}

/** The embedded system on ephemeral loopback ports, an in-memory store, "now" pinned. */
export async function startReporting(
  mode: Mode,
  env: Record<string, string> = {},
  clock: () => Date = () => FIXED_NOW,
): Promise<RunningReporting> {
  const system = await startEmbeddedSystem(
    {
      DUCKDB_PATH: ':memory:',
      CATALOG_PATH: writeTestCatalog(),
      REPORTING_PORT: '0',
      INGEST_PORT: '0',
      AUCTION_PORT: '0',
      RATE_LIMIT_PER_SECOND: '10000',
      ...(mode === 'distributed' ? distributedEnv() : {}),
      ...env,
    },
    createLogger('silent', 'e2e'),
    clock,
  );
  const baseUrl = `http://127.0.0.1:${listeningPort(system.reporting)}`;
  return { system, client: new ReportClient(baseUrl, clock), baseUrl };
}

/** Sends events through the bus and the ingest, the path of live traffic. */
export async function publishEvents(system: EmbeddedSystem, events: readonly AdEvent[]): Promise<void> {
  const byTopic = new Map<string, AdEvent[]>();
  for (const e of events) {
    const topic = TOPIC_BY_TYPE[e.type];
    byTopic.set(topic, byTopic.get(topic) ?? []);
    byTopic.get(topic)!.push(e);
  }
  for (const [topic, list] of byTopic) {
    await system.bus.publish(topic, list.map(toMessage));
  }
  await system.settle();
}
