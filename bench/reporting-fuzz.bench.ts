import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { TOPIC_BY_TYPE, toMessage, type AdEvent } from '@app/events';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import {
  FIXED_NOW,
  ReportClient,
  STACK,
  clickHouseLines,
  codeCounts,
  demoEvents,
  runReportingFuzz,
  startBackgroundIngest,
  writeTestCatalog,
} from '@app/testing';
import { startEmbeddedSystem, type EmbeddedSystem } from '@apps/main';

/**
 * The long run of the reporting API's fuzzer (libs/testing/src/reporting-fuzz.ts; the e2e suite
 * test/e2e/reporting-fuzz.test.ts runs 3,000 of the same requests): 100,000 seeded requests over HTTP to the
 * embedded system (DuckDB in memory, as `npm start` without a stack), while an ingest keeps adding
 * yesterday's traffic, every answer checked as the suite checks it (a code of reporting part 7,
 * docs/specification-notes.md#reporting-part-7, with its status, never 53, valid headers, a JSON report's
 * totals equal to its rows).
 *
 * `npm run bench:reporting-fuzz [-- --requests 100000] [--seed 20261122] [--ingest-interval-ms 100]
 *  [--distributed]` (`--distributed`: Kafka, ClickHouse and Redis of `npm run stack:up`, under fresh
 *  names; the ClickHouse database is dropped at the end). Exits 1 when any answer failed a check,
 * printing the first 20 with what was sent. Not in CI: about 10 ms a request on two cores.
 */
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '20261122' },
    'ingest-interval-ms': { type: 'string', default: '100' },
    distributed: { type: 'boolean', default: false },
  },
});
const REQUESTS = Number(values.requests);
const SEED = Number(values.seed);

/** Fresh names on the stack's servers, as the e2e suites take them. */
function distributedEnv(): Record<string, string> {
  const id = `${process.pid}_${Date.now()}`;
  return {
    CLICKHOUSE_URL: STACK.clickhouseUrl,
    CLICKHOUSE_DATABASE: `adx_bench_fuzz_${id}`,
    KAFKA_BROKERS: STACK.kafkaBrokers,
    KAFKA_TOPIC_PREFIX: `bench.${id}.`,
    KAFKA_CLIENT_ID: `bench-fuzz-${id}`,
    KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
    INGEST_GROUP_ID: `ingest-bench-${id}`,
    REDIS_URL: STACK.redisUrl,
    REDIS_KEY_PREFIX: `bench:${id}:`,
  };
}

async function publishAndSettle(system: EmbeddedSystem, events: readonly AdEvent[]): Promise<void> {
  for (const type of new Set(events.map((e) => e.type))) {
    const topic = TOPIC_BY_TYPE[type];
    await system.bus.publish(topic, events.filter((e) => e.type === type).map(toMessage));
  }
  await system.settle();
}

async function main(): Promise<void> {
  const env = values.distributed ? distributedEnv() : {};
  // The clock moves a second per request, so that signed seeds stay in the window (100,000
  // requests move "today" two days on: the relative dates move with it).
  let now = FIXED_NOW.getTime();
  const clock = () => new Date(now);
  const system = await startEmbeddedSystem(
    {
      DUCKDB_PATH: ':memory:',
      CATALOG_PATH: writeTestCatalog(),
      REPORTING_PORT: '0',
      INGEST_PORT: '0',
      AUCTION_PORT: '0',
      RATE_LIMIT_PER_SECOND: '10000',
      ...env,
    },
    createLogger('silent', 'bench'),
    clock,
  );
  const baseUrl = `http://127.0.0.1:${listeningPort(system.reporting)}`;
  const client = new ReportClient(baseUrl, clock);
  let exitCode = 1;
  try {
    await publishAndSettle(system, demoEvents(3, 400));
    const ingest = startBackgroundIngest(system.bus, system.catalog, FIXED_NOW, {
      intervalMs: Number(values['ingest-interval-ms']),
    });
    console.log(
      `reporting fuzz bench: ${REQUESTS} requests, seed ${SEED}, ${values.distributed ? 'distributed (Kafka, ClickHouse, Redis)' : 'embedded (DuckDB)'}`,
    );
    const run = await runReportingFuzz({
      baseUrl,
      seed: SEED,
      requests: REQUESTS,
      nextSeed: () => client.nextSeed(),
      beforeRequest: () => {
        now += 1000;
      },
      progressEvery: 10_000,
      progress: (done, progress) =>
        console.log(
          `  ${done} requests, ${progress.failureCount} failures, ${progress.totalsChecked} totals checked, ` +
            `${ingest.batches} ingest batches, ${(progress.elapsedMs / 1000).toFixed(0)} s`,
        ),
    }).finally(() => ingest.stop());
    const perSecond = (run.requests / run.elapsedMs) * 1000;
    console.log(
      `RESULT requests=${run.requests} failures=${run.failureCount} totals_checked=${run.totalsChecked} ` +
        `ingest_batches=${ingest.batches} seconds=${(run.elapsedMs / 1000).toFixed(1)} per_second=${perSecond.toFixed(0)}`,
    );
    console.log(`codes ${codeCounts(run)}`);
    for (const failure of run.failures.slice(0, 20)) {
      console.log(`FAILURE ${failure.slice(0, 2000)}`);
    }
    exitCode = run.failureCount === 0 ? 0 : 1;
  } finally {
    await system.close();
    if (values.distributed) {
      await clickHouseLines(`DROP DATABASE IF EXISTS ${env.CLICKHOUSE_DATABASE}`);
    }
  }
  process.exit(exitCode);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
