import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { toMessage, TOPIC_BY_TYPE, type AdEvent } from '@app/events';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import { inject } from 'vitest';
import { FIXED_NOW, ReportClient, STACK, requireOrSkip, writeTestCatalog } from '@app/testing';
import { startEmbeddedSystem, type EmbeddedSystem } from '@apps/main';

/** The users of the reporting API the suites sign as, and the catalog that adds the test-only ones. */
export { TEST_USERS as USERS, writeTestCatalog } from '@app/testing';

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
      // The suites' DSP simulators listen on loopback: their notices and trackers are called there.
      DSP_URL_ALLOW_PRIVATE: '1',
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
