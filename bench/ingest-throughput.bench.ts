import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { EVENT_TOPICS, KafkaEventBus, TOPIC_BY_TYPE, toMessage, type OutgoingMessage } from '@app/events';
import { openReportStore } from '@app/report-store';
import { IngestService } from '@apps/ingest';

/**
 * Ingest throughput from Kafka to queryable ClickHouse rows. `npm run bench:ingest` (stack:up first).
 * Phase 1 loads the topics with generated events (the producer's own rate is reported); phase 2
 * starts the ingest on the loaded topics and counts queryable rows every second for `--seconds`.
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '3000000' },
    seconds: { type: 'string', default: '60' },
    brokers: { type: 'string', default: '127.0.0.1:19092' },
    url: { type: 'string', default: 'http://127.0.0.1:18123' },
  },
});
const EVENTS = Number(values.events);
const SECONDS = Number(values.seconds);
const run = `bench_${Date.now()}`;

function bus(clientId: string): KafkaEventBus {
  return new KafkaEventBus({
    brokers: values.brokers.split(','),
    clientId,
    topicPrefix: `${run}.`,
    partitions: 4,
    spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-bench-spool-')),
    spoolMaxBytes: 1024 * 1024 * 1024,
    concurrentPartitions: 4,
  });
}

async function main(): Promise<void> {
  const producer = bus(`${run}-producer`);
  await producer.ensureTopics(EVENT_TOPICS);
  let started = Date.now();
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
      await producer.publish(topic, queue);
      sent += queue.length;
    }
  }
  for (const [topic, queue] of pending) {
    if (queue.length) {
      await producer.publish(topic, queue);
    }
  }
  sent += [...pending.values()].reduce((n, q) => n + q.length, 0);
  const produceSeconds = (Date.now() - started) / 1000;
  console.log(
    `phase 1: produced ${sent} events in ${produceSeconds.toFixed(0)} s, ${Math.round(sent / produceSeconds)}/s`,
  );

  const store = await openReportStore({
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
    Number(
      (
        await (
          await client.query({ query: 'SELECT count() AS n FROM events_raw', format: 'JSONEachRow' })
        ).json<{ n: string }>()
      )[0].n,
    );
  const consumer = bus(`${run}-ingest`);
  const ingest = new IngestService(consumer, store);
  const reportable = sent; // every generated event is an impression, click or conversion
  started = Date.now();
  await consumer.subscribe(`${run}-ingest`, EVENT_TOPICS, (batch) => ingest.handle(batch));
  const samples: { at: number; rows: number }[] = [];
  let stored = 0;
  while ((Date.now() - started) / 1000 < SECONDS && stored < reportable) {
    await new Promise((r) => setTimeout(r, 1000));
    stored = await rows();
    samples.push({ at: (Date.now() - started) / 1000, rows: stored });
  }
  const elapsed = (Date.now() - started) / 1000;
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
