import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import {
  EVENT_TOPICS,
  KafkaEventBus,
  TOPIC_BY_TYPE,
  toMessage,
  type KafkaCompression,
  type OutgoingMessage,
} from '@app/events';
import { openReportStore, type OffsetEvent, type ReportStore } from '@app/report-store';
import { serverCpuMicros } from './server-cpu';
import { IngestService } from '@apps/ingest';

/**
 * Ingest throughput from Kafka to queryable ClickHouse rows. `npm run bench:ingest` (stack:up first).
 * Phase 1 loads the topics with generated events (the producer's own rate is reported); phase 2
 * starts the ingest on the loaded topics and counts queryable rows every second for `--seconds`.
 * Each phase prints the CPU time of this process per event (user + system); `--profile DIR` writes
 * one V8 CPU profile per phase (produce.cpuprofile, ingest.cpuprofile), which a whole-process
 * `--cpu-prof` cannot separate.
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000000' },
    /** Days the events spread over, ending now: 1 is live traffic, 30 a month's backfill. */
    days: { type: 'string', default: '30' },
    'in-flight': { type: 'string', default: '1' },
    producers: { type: 'string', default: '4' },
    /** Ingest processes in phase 2: this one and N - 1 children in the same consumer group. */
    ingests: { type: 'string', default: '1' },
    /** Internal: runs as a child ingest of the run given. */
    'worker-of': { type: 'string' },
    seconds: { type: 'string', default: '60' },
    brokers: { type: 'string', default: '127.0.0.1:19092' },
    url: { type: 'string', default: 'http://127.0.0.1:18123' },
    profile: { type: 'string' },
    compression: { type: 'string', default: 'gzip' },
    'max-bytes-per-partition': { type: 'string', default: String(4 * 1024 * 1024) },
    'concurrent-partitions': { type: 'string', default: '4' },
    store: { type: 'string', default: 'clickhouse' },
    /** The run id (`bench_<ms>`) of an earlier run whose loaded topics phase 2 reads again. */
    'reuse-topics': { type: 'string' },
  },
});
const EVENTS = Number(values.events);
const SECONDS = Number(values.seconds);
const DAYS = Number(values.days);
const IN_FLIGHT = Number(values['in-flight']);
const INGESTS = Number(values.ingests);
const run = values['worker-of'] ?? `bench_${Date.now()}`;
const topicsOf = values['reuse-topics'] ?? run;

function bus(clientId: string): KafkaEventBus {
  return new KafkaEventBus({
    brokers: values.brokers.split(','),
    clientId,
    topicPrefix: `${topicsOf}.`,
    partitions: 4,
    spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-bench-spool-')),
    spoolMaxBytes: 1024 * 1024 * 1024,
    concurrentPartitions: Number(values['concurrent-partitions']),
    maxBytesPerPartition: Number(values['max-bytes-per-partition']),
    compression: values.compression as KafkaCompression,
    producers: Number(values.producers),
  });
}

/** CPU microseconds (user + system) of this process since `since`. */
function cpuMicros(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

const SERVERS = { clickhouse: 'clickhouse-server', kafka: 'kafka\\.Kafka' } as const;

function serversCpu(): Record<keyof typeof SERVERS, number> {
  return {
    clickhouse: serverCpuMicros(SERVERS.clickhouse),
    kafka: serverCpuMicros(SERVERS.kafka),
  };
}

/** The servers' CPU since `since`, per event. */
function serversPerEvent(since: Record<keyof typeof SERVERS, number>, events: number): string {
  const now = serversCpu();
  return (Object.keys(SERVERS) as (keyof typeof SERVERS)[])
    .map((name) => `${name} ${((now[name] - since[name]) / events).toFixed(1)} µs CPU/event`)
    .join(', ');
}

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** Starts a CPU profile of this process when --profile is given; the returned function writes it. */
async function profile(name: string): Promise<() => Promise<void>> {
  if (!values.profile) {
    return async () => undefined;
  }
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile: written } = await session.post('Profiler.stop');
    writeFileSync(path.join(values.profile!, `${name}.cpuprofile`), JSON.stringify(written));
    session.disconnect();
  };
}

/**
 * Phase 1: generates the events, serialised and grouped in publishes of 10,000 per topic, then
 * publishes them one publish after the other. Only the publishing is timed and profiled: the
 * generator's garbage would otherwise be collected on the producer's time.
 */
async function produce(producer: KafkaEventBus): Promise<number> {
  await producer.ensureTopics(EVENT_TOPICS);
  const generating = process.cpuUsage();
  const publishes: { topic: string; messages: OutgoingMessage[] }[] = [];
  const pending = new Map<string, OutgoingMessage[]>();
  for (const event of generateDemoTraffic(loadCatalog(), {
    days: DAYS,
    eventsPerDay: Math.ceil(EVENTS / DAYS),
    now: new Date(),
    seed: 3,
  })) {
    const topic = TOPIC_BY_TYPE[event.type];
    const queue = pending.get(topic) ?? [];
    queue.push(toMessage(event));
    pending.set(topic, queue);
    if (queue.length === 10_000) {
      pending.set(topic, []);
      publishes.push({ topic, messages: queue });
    }
  }
  for (const [topic, queue] of pending) {
    if (queue.length) {
      publishes.push({ topic, messages: queue });
    }
  }
  const generated = publishes.reduce((sum, p) => sum + p.messages.length, 0);
  console.log(
    `phase 1: generated ${generated} events, ${(cpuMicros(generating) / generated).toFixed(1)} µs CPU/event`,
  );
  globalThis.gc?.();
  const stopProfile = await profile('produce');
  const servers = serversCpu();
  const cpu = process.cpuUsage();
  const started = Date.now();
  let sent = 0;
  // Shifted, so that what was sent can be collected; --in-flight publishes at once, as the
  // auction's publisher sends each topic's buffer without waiting for the others.
  const publisher = async () => {
    for (let next = publishes.shift(); next; next = publishes.shift()) {
      await producer.publish(next.topic, next.messages);
      sent += next.messages.length;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, publisher));
  const seconds = (Date.now() - started) / 1000;
  const total = cpuMicros(cpu);
  await stopProfile();
  console.log(
    `         produced ${sent} events in ${seconds.toFixed(1)} s, ${Math.round(sent / seconds)}/s; ` +
      `${(total / sent).toFixed(1)} µs CPU/event; load average ${load()}`,
  );
  console.log(`         servers: ${serversPerEvent(servers, sent)}`);
  return sent;
}

/**
 * The events in the topics of an earlier run (`--reuse-topics RUN --events N`, N as that run
 * produced): records are frames of many events, so the topics' offsets do not count them.
 */
function loaded(): number {
  console.log(`phase 1 skipped: reading the ${EVENTS} events (--events) in the topics of ${topicsOf}`);
  return EVENTS;
}

function clickHouseStore(): Promise<ReportStore> {
  return openReportStore({
    kind: 'clickhouse',
    url: values.url,
    database: run,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 60_000,
    rawRetentionMonths: 120,
  });
}

/** A child ingest (`--ingests N`): consumes until told to stop, then reports its CPU and exits. */
async function worker(): Promise<void> {
  const store = await clickHouseStore();
  const consumer = bus(`${run}-ingest-${process.pid}`);
  const ingest = new IngestService(consumer, store);
  const cpu = process.cpuUsage();
  await consumer.subscribe(`${run}-ingest`, EVENT_TOPICS, (batch) => ingest.handle(batch));
  process.send?.('ready');
  process.once('message', () => {
    const used = cpuMicros(cpu);
    void consumer
      .close()
      .then(() => store.close())
      .finally(() => process.send?.({ cpu: used }, () => process.exit(0)));
  });
}

/** Starts the child ingests and resolves once each has joined the group. */
async function startWorkers(count: number): Promise<ChildProcess[]> {
  const children = Array.from({ length: count }, () =>
    fork(process.argv[1], [...process.argv.slice(2), '--worker-of', run, '--reuse-topics', topicsOf], {
      execArgv: process.execArgv.filter((flag) => !flag.startsWith('--cpu-prof')),
    }),
  );
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('message', resolve))));
  return children;
}

/** Stops the child ingests; their CPU microseconds in all. */
async function stopWorkers(children: ChildProcess[]): Promise<number> {
  const used = await Promise.all(
    children.map(
      (child) =>
        new Promise<number>((resolve) => {
          child.once('message', (message: { cpu: number }) => resolve(message.cpu));
          child.send('stop');
        }),
    ),
  );
  return used.reduce((sum, micros) => sum + micros, 0);
}

async function main(): Promise<void> {
  console.log(`run ${run} (its topics: --reuse-topics ${run}); load average at start: ${load()}`);
  const producer = bus(`${run}-producer`);
  const sent = values['reuse-topics'] ? loaded() : await produce(producer);
  if (SECONDS === 0) {
    // --seconds 0 measures the producer alone.
    await producer.close();
    return;
  }

  // --store null: a store that keeps nothing, to measure the consumer and the parsing alone.
  let handled = 0;
  const nullStore = {
    ingest: async (_source: string, batch: readonly OffsetEvent[]) => {
      handled += batch.length;
      return { stored: batch.length, skipped: 0 };
    },
    close: async () => undefined,
  } as unknown as ReportStore;
  const store = values.store === 'null' ? nullStore : await clickHouseStore();
  const children = await startWorkers(INGESTS - 1);
  const client = createClient({ url: values.url, database: run, log: { level: ClickHouseLogLevel.OFF } });
  const rows = async () =>
    values.store === 'null'
      ? handled
      : Number(
          (
            await (
              await client.query({ query: 'SELECT count() AS n FROM events_raw', format: 'JSONEachRow' })
            ).json<{ n: string }>()
          )[0].n,
        );
  const consumer = bus(`${run}-ingest`);
  const ingest = new IngestService(consumer, store);
  const reportable = sent; // every generated event is an impression, click or conversion
  const stopProfile = await profile('ingest');
  // Heartbeats wait for the event loop: its delays say whether a batch could starve them.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const servers = serversCpu();
  const cpu = process.cpuUsage();
  const started = Date.now();
  await consumer.subscribe(`${run}-ingest`, EVENT_TOPICS, (batch) => ingest.handle(batch));
  const samples: { at: number; rows: number }[] = [];
  let stored = 0;
  while ((Date.now() - started) / 1000 < SECONDS && stored < reportable) {
    await new Promise((r) => setTimeout(r, 1000));
    stored = await rows();
    samples.push({ at: (Date.now() - started) / 1000, rows: stored });
  }
  const elapsed = (Date.now() - started) / 1000;
  const ingestCpu = cpuMicros(cpu) + (await stopWorkers(children));
  const serversUsed = serversPerEvent(servers, stored);
  await stopProfile();
  const first = samples.find((s) => s.rows > 0) ?? samples[0];
  const last = samples[samples.length - 1];
  console.log(
    `phase 2: ${stored} rows queryable after ${elapsed.toFixed(0)} s: ${Math.round(stored / elapsed)} events/s overall`,
  );
  console.log(
    `         from the first queryable row (${first.at.toFixed(1)} s) to the last sample (${last.at.toFixed(1)} s): ` +
      `${Math.round((last.rows - first.rows) / Math.max(0.001, last.at - first.at))} events/s, ${samples.length} samples`,
  );
  console.log(`         lag at the end: ${reportable - stored} events not yet queryable`);
  console.log(
    `         ${(ingestCpu / stored).toFixed(1)} µs CPU/event (${(ingestCpu / 1e6 / elapsed).toFixed(2)} cores, ${INGESTS} ingest process(es)), load average ${load()}`,
  );
  console.log(`         servers: ${serversUsed}`);
  loopDelay.disable();
  console.log(
    `         event loop delay: p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`,
  );
  await consumer.close();
  await producer.close();
  await store.close();
  await client.command({ query: `DROP DATABASE IF EXISTS ${run}` }).catch(() => undefined);
  await client.close();
}

(values['worker-of'] ? worker() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
