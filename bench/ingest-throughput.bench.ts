import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
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
import { Kafka, logLevel } from 'kafkajs';
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
const run = `bench_${Date.now()}`;
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
  });
}

/** CPU microseconds (user + system) of this process since `since`. */
function cpuMicros(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
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
 * Phase 1: generates the events and publishes them, 10,000 at a time per topic. The CPU of the
 * synchronous stretches that generate and serialise events is counted apart, so that the
 * producer's own cost per event can be told from the generator's.
 */
async function produce(producer: KafkaEventBus): Promise<number> {
  await producer.ensureTopics(EVENT_TOPICS);
  const stopProfile = await profile('produce');
  const cpu = process.cpuUsage();
  const started = Date.now();
  let generating = 0;
  let from = process.cpuUsage();
  const pending = new Map<string, OutgoingMessage[]>();
  let sent = 0;
  for (const event of generateDemoTraffic(loadCatalog(), {
    days: 30,
    eventsPerDay: Math.ceil(EVENTS / 30),
    now: new Date(),
    seed: 3,
  })) {
    const topic = TOPIC_BY_TYPE[event.type];
    const queue = pending.get(topic) ?? [];
    queue.push(toMessage(event));
    pending.set(topic, queue);
    if (queue.length === 10_000) {
      pending.set(topic, []);
      generating += cpuMicros(from);
      await producer.publish(topic, queue);
      from = process.cpuUsage();
      sent += queue.length;
    }
  }
  generating += cpuMicros(from);
  for (const [topic, queue] of pending) {
    if (queue.length) {
      await producer.publish(topic, queue);
      sent += queue.length;
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const total = cpuMicros(cpu);
  await stopProfile();
  console.log(
    `phase 1: produced ${sent} events in ${seconds.toFixed(1)} s, ${Math.round(sent / seconds)}/s; ` +
      `${(total / sent).toFixed(1)} µs CPU/event, of which generating ${(generating / sent).toFixed(1)} ` +
      `and producing ${((total - generating) / sent).toFixed(1)}; load average ${load()}`,
  );
  return sent;
}

/** The events already in the topics of an earlier run (`--reuse-topics`). */
async function loaded(): Promise<number> {
  const admin = new Kafka({ brokers: values.brokers.split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  let events = 0;
  for (const topic of EVENT_TOPICS) {
    for (const partition of await admin.fetchTopicOffsets(`${topicsOf}.${topic}`)) {
      events += Number(partition.high) - Number(partition.low);
    }
  }
  await admin.disconnect();
  console.log(`phase 1 skipped: ${events} events in the topics of ${topicsOf}`);
  return events;
}

async function main(): Promise<void> {
  console.log(`load average at start: ${load()}`);
  const producer = bus(`${run}-producer`);
  const sent = values['reuse-topics'] ? await loaded() : await produce(producer);
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
  const store =
    values.store === 'null'
      ? nullStore
      : await openReportStore({
          kind: 'clickhouse',
          url: values.url,
          database: run,
          migrationsDir: 'clickhouse',
          sampleDenominator: 10,
          queryTimeoutMs: 60_000,
          rawRetentionMonths: 120,
        });
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
  const ingestCpu = cpuMicros(cpu);
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
    `         ${(ingestCpu / stored).toFixed(1)} µs CPU/event (${(ingestCpu / 1e6 / elapsed).toFixed(2)} cores), load average ${load()}`,
  );
  await consumer.close();
  await producer.close();
  await store.close();
  await client.command({ query: `DROP DATABASE IF EXISTS ${run}` }).catch(() => undefined);
  await client.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
