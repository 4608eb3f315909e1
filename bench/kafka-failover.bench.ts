import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { BaseSettings, loadConfig } from '@app/config';
import { TOPIC_BY_TYPE, toMessage } from '@app/events';
import { spoolBytes } from '@app/observability';
import { eventBusFrom } from '@app/runtime';
import { ClusterStack, demoEvents, waitUntil } from '@app/testing';

/**
 * How long the event bus holds its publishes when a broker of the cluster topology dies (issue 20):
 * the three KRaft brokers of stack/cluster-up.sh alone, on a private folder and ports, and the bus
 * as the apps configure it (replication factor 3, min.insync.replicas 2). Publishes of 30 events,
 * one out at a time and at most one each 25 ms, as an auction sends its batches. A broker (every
 * partition has a replica on each) is killed with SIGKILL K times, alternately one that is not the
 * active KRaft controller and the active controller, each time started again and back in every
 * in-sync replica set before the next. Per kill: when the dead broker was fenced (from the
 * controllers' logs); when Kafka had every event published up to a second after the kill
 * (acknowledged, or spooled and replayed: 1,000 ms at the least); the longest a publish waited
 * (those started from 1 s before the kill to 20 s after) and how many waited over 1 s; the events
 * spooled (a spooled publish resolves at once, held on disk rather than in memory); and every
 * fence of a broker that was not killed (a live broker taken for dead: a session too short for
 * the machine).
 * `npm run bench:kafka-failover -- --kills 6`
 */
const { values } = parseArgs({ options: { kills: { type: 'string', default: '5' } } });
const KILLS = Number(values.kills);
const WINDOW_MS = 20_000;
type Broker = 1 | 2 | 3;

async function main(): Promise<void> {
  const id = `${process.pid}_${Date.now()}`;
  const prefix = `kfo-${id}.`;
  const topic = TOPIC_BY_TYPE.impression;
  const stack = await ClusterStack.create('failover-bench');
  const warnings: string[] = [];
  try {
    stack.up('kafka1', 'kafka2', 'kafka3');
    const admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const bus = eventBusFrom(
      loadConfig(BaseSettings, {
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_REPLICATION_FACTOR: '3',
        KAFKA_CLIENT_ID: `kfo-${id}`,
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-kfo-spool-')),
      }),
      (message) => warnings.push(message),
    );
    const messages = demoEvents(1, 30).map(toMessage);
    // The first send may fail while the new topic's leaders settle, and be spooled: every round
    // starts with the spool replayed, so that no publish queues behind it.
    await bus.publish(topic, messages);
    await bus.drain();
    const partitions = async () =>
      (await admin.fetchTopicMetadata({ topics: [`${prefix}${topic}`] })).topics[0].partitions;
    const inSync = (isr: number, without?: Broker) =>
      waitUntil(
        `every partition with ${isr} in-sync replicas`,
        async () =>
          (await partitions()).every((p) => p.isr.length === isr && p.leader >= 0 && p.leader !== without),
        { timeoutMs: 120_000, retryErrors: true },
      );
    await inSync(3);

    const rows: string[] = [];
    const fences = new Set<string>();
    for (let kill = 1; kill <= KILLS; kill += 1) {
      // Odd kills a broker that is not the active controller, even ones the active controller, whose
      // death costs an election before anyone can fence it.
      const controller = stack.kafkaActiveController();
      if (controller === undefined) {
        throw new Error('no broker logged becoming the active controller');
      }
      const victim = (kill % 2 === 0 ? controller : [1, 2, 3].find((n) => n !== controller)) as Broker;
      await bus.drain();
      const spooledBefore = spooledEvents(warnings);
      const publishes: { start: number; end?: number }[] = [];
      // One publish out at a time, the next at least 25 ms after the one before began: an auction
      // keeps one batch a topic out and buffers the rest.
      let publishing = true;
      const publisher = (async () => {
        while (publishing) {
          const publish: { start: number; end?: number } = { start: Date.now() };
          publishes.push(publish);
          await bus.publish(topic, messages);
          publish.end = Date.now();
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, publish.start + 25 - publish.end!)));
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const killedAt = Date.now();
      stack.kill(`kafka${victim}`);
      // When Kafka has every event published up to the second after the kill: each of those
      // publishes resolved, and the spool (where a send given up, and every publish behind it, waits) empty.
      let caughtUpAt: number | undefined;
      const watch = setInterval(() => {
        void spoolBytes.get().then(({ values }) => {
          const now = Date.now();
          const spooled = values.reduce((sum, v) => sum + v.value, 0);
          const out = publishes.some((p) => p.start <= killedAt + 1_000 && p.end === undefined);
          if (caughtUpAt === undefined && now >= killedAt + 1_000 && spooled === 0 && !out) {
            caughtUpAt = now;
          }
        });
      }, 20);
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      clearInterval(watch);
      publishing = false;
      await publisher;
      await bus.drain();
      const waited = publishes
        .filter((p) => p.start >= killedAt - 1_000)
        .map((p) => p.end! - p.start)
        .sort((a, b) => b - a);
      await inSync(2, victim);
      const fenced = stack.kafkaFences().filter((f) => !fences.has(f.line));
      for (const { line } of fenced) {
        fences.add(line);
      }
      const own = fenced.find((f) => f.broker === victim && f.at >= killedAt - 1_000);
      const others = fenced.filter((f) => f !== own).map((f) => `broker ${f.broker}`);
      const row =
        `kill ${kill}: broker ${victim}${victim === controller ? ' (the active controller)' : ''}, fenced ${own ? `${own.at - killedAt} ms` : 'not logged'} after the kill, ` +
        `all published by a second after it in Kafka ${caughtUpAt === undefined ? 'not within the window' : `${caughtUpAt - killedAt} ms`} after it, ` +
        `longest publish ${waited[0]} ms, ` +
        `${waited.filter((ms) => ms > 1_000).length} of ${waited.length} over 1 s, ` +
        `${spooledEvents(warnings) - spooledBefore} event(s) spooled, ` +
        `other fences since the last kill: ${others.length === 0 ? 'none' : others.join(', ')}`;
      console.log(row);
      rows.push(row);
      stack.up(`kafka${victim}`);
      await inSync(3);
    }
    await bus.close();
    await admin.disconnect();
    console.log(JSON.stringify({ kills: KILLS, rows }, null, 2));
  } finally {
    stack.destroy();
  }
}

/** Events the bus said it spooled (its warning on a send given up). */
function spooledEvents(warnings: readonly string[]): number {
  return warnings.map((w) => Number(/spooling (\d+) event/.exec(w)?.[1] ?? 0)).reduce((a, b) => a + b, 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
