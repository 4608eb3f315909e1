import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { BaseSettings, loadConfig } from '@app/config';
import { DspSimulator } from '@app/dsp-simulator';
import { EVENT_TOPICS, KafkaEventBus, TOPIC_BY_TYPE, type AdEvent } from '@app/events';
import { spoolBytes, eventsInFlight } from '@app/observability';
import { distributedDatabase, type ClickHouseReportStore } from '@app/report-store';
import { eventBusFrom, kafkaBusOptions } from '@app/runtime';
import {
  ClusterStack,
  type IngestProcess,
  demoEvents,
  freePort,
  requireOrSkip,
  stackServersInstalled,
  waitUntil,
  writeTestCatalog,
  type ClusterNode,
} from '@app/testing';
import {
  clusterNodeSql,
  deepEqual,
  expectSealedToHandCount,
  publishEvents,
  startClusterIngest,
} from '../support/cluster-faults';

/**
 * Kafka under faults on the cluster, with the product's own parts (docs/distributed.md#faults-on-the-cluster):
 * the event bus configured as the apps configure it (`KAFKA_REPLICATION_FACTOR` 3,
 * `min.insync.replicas` left to its default, 2), the built ingest app on the ClickHouse cluster
 * (2 shards x 2 replicas, the product's schema: ReplicatedMergeTree, Distributed, a source's events
 * on one shard) and two built auction apps. The leader of the partitions being written, then a
 * broker with a publish out as the bus closes, then the broker coordinating the ingest's group, is
 * killed with SIGKILL while they publish and the ingest stores; every event must be stored, once,
 * against a hand count (the events generated, the auctions' HTTP answers), what a closed bus or a
 * stopped auction left in its spool delivered by starting it again on that spool.
 */
const available = requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java');
const ROOT = path.resolve(__dirname, '../..');
const AUCTION = path.join(ROOT, 'dist/apps/auction/src/main.js');
const RANGE = { start: '2026-01-01', end: '2026-11-21' };
/** A Kafka node of the cluster (its KRaft node id). */
type Broker = 1 | 2 | 3;

describe.runIf(available)('Kafka brokers killed under the product on the cluster', () => {
  const id = `${process.pid}_${Date.now()}`;
  const database = `adx_kf_${id}`;
  const prefix = `kf-${id}.`;
  const group = `kf-${id}`;
  let stack: ClusterStack;
  let admin: Admin;
  let store: ClickHouseReportStore;
  let ingest: IngestProcess;
  const children: ChildProcess[] = [];
  /** The variables every app of this test shares: the cluster's brokers and the topics' replication. */
  let kafkaEnv: Record<string, string>;
  /** Every event the bus published so far, the hand count of the closed days' reports. */
  const publishedSoFar: AdEvent[] = [];

  /** A query on `node`, in the store's database there (its local tables) unless it names another. */
  const sqlOn = clusterNodeSql(() => stack, database);
  /** A query through the Distributed tables (every shard), as the reports read, on node 1. */
  const sql = (query: string) => sqlOn(1, query, distributedDatabase(database));

  /** The broker leading partition 0 of a topic, as the cluster's metadata says now. */
  const leaderOf = async (topic: string): Promise<Broker> => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [`${prefix}${topic}`] });
    return topics[0].partitions.find((p) => p.partitionId === 0)!.leader as Broker;
  };

  /**
   * The broker coordinating the ingest's group: the leader of the `__consumer_offsets` partition the
   * group id hashes to (Java's String.hashCode, as Kafka computes it, modulo that topic's partitions).
   */
  const coordinatorOf = async (group: string): Promise<Broker> => {
    let hash = 0;
    for (const unit of group) {
      hash = (Math.imul(31, hash) + unit.charCodeAt(0)) | 0;
    }
    const { topics } = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets'] });
    const { partitions } = topics[0];
    // Kafka's Utils.abs: the lowest int maps to 0.
    const index = (hash === -2147483648 ? 0 : Math.abs(hash)) % partitions.length;
    return partitions.find((p) => p.partitionId === index)!.leader as Broker;
  };

  /** Waits until no partition of the test's topics is led by `broker` and each has 2 in-sync replicas. */
  const failedOver = (broker: Broker) =>
    waitUntil(
      `the partitions to leave broker ${broker}`,
      async () => {
        const { topics } = await admin.fetchTopicMetadata({
          topics: EVENT_TOPICS.map((t) => `${prefix}${t}`),
        });
        const moved = topics.every((t) =>
          t.partitions.every((p) => p.leader !== broker && p.leader >= 0 && p.isr.length === 2),
        );
        return moved;
      },
      { timeoutMs: 60_000, retryErrors: true },
    );

  const backInSync = () =>
    waitUntil(
      'every replica back in sync',
      async () => {
        const { topics } = await admin.fetchTopicMetadata({
          topics: EVENT_TOPICS.map((t) => `${prefix}${t}`),
        });
        return topics.every((t) => t.partitions.every((p) => p.isr.length === 3));
      },
      { timeoutMs: 120_000, retryErrors: true },
    );

  beforeAll(async () => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    stack = await ClusterStack.create('faults');
    stack.up();
    admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await waitUntil(
      'three brokers registered',
      async () => (await admin.describeCluster()).brokers.length === 3,
      { timeoutMs: 60_000, retryErrors: true },
    );
    store = stack.store(database);
    await store.migrate();
    // The ingest creates the topics (at subscription) from its configuration.
    ({ ingest, kafkaEnv } = await startClusterIngest(stack, { topicPrefix: prefix, group, database }));
  }, 360_000);

  afterAll(async () => {
    for (const child of children) {
      child.kill('SIGKILL');
    }
    await ingest?.kill();
    await store?.close().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    stack?.destroy();
  });

  it('the apps create every topic with KAFKA_REPLICATION_FACTOR replicas and min.insync.replicas set on the topic', async () => {
    const topics = EVENT_TOPICS.map((t) => `${prefix}${t}`);
    // The ingest subscribes to the event topics and creates the dead-letter one when it first needs it.
    const { topics: metadata } = await waitUntil(
      'the ingest to create its topics',
      async () => {
        const now = await admin.fetchTopicMetadata({ topics });
        return now.topics.length === topics.length ? now : undefined;
      },
      { timeoutMs: 60_000, retryErrors: true },
    );
    for (const { partitions } of metadata) {
      expect(partitions).toHaveLength(4);
      for (const partition of partitions) {
        expect(partition.replicas).toHaveLength(3);
      }
    }
    // A broker answers for a topic only once the controller's metadata reached it: right after the
    // creation one may still say "does not host this topic-partition" (seen once).
    const { resources } = await waitUntil(
      "the brokers to know the topics' configuration",
      () =>
        admin.describeConfigs({
          resources: topics.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas'] })),
          includeSynonyms: false,
        }),
      { timeoutMs: 30_000, retryErrors: true },
    );
    for (const resource of resources) {
      // Set on the topic by the bus (configSource 1, TOPIC_CONFIG), not inherited from the brokers.
      expect(resource.configEntries.map((e) => [e.configValue, e.configSource])).toEqual([['2', 1]]);
    }
  });

  it('kill -9 of the leader broker while the event bus publishes and the ingest stores: every event stored once, closed days equal the hand count', async () => {
    const events = demoEvents(3, 3000);
    const warnings: string[] = [];
    diagnoseOnFailure(warnings);
    const bus = eventBusFrom(
      loadConfig(BaseSettings, {
        ...kafkaEnv,
        KAFKA_CLIENT_ID: `kf-producer-${id}`,
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-kf-spool-')),
      }),
      (message) => warnings.push(message),
    );
    const chunks = chunksOf(events, 400);
    // A leader of partitions being written that is not the active KRaft controller: the controller's
    // death costs an election first (measured apart: bench/kafka-failover.bench.ts).
    const controller = stack.kafkaActiveController();
    const { topics: impressions } = await admin.fetchTopicMetadata({
      topics: [`${prefix}${TOPIC_BY_TYPE.impression}`],
    });
    const victim =
      impressions[0].partitions
        .map((p) => p.leader as Broker)
        .sort()
        .find((leader) => leader !== controller) ?? ([1, 2, 3] as const).find((n) => n !== controller)!;
    let atKill: { published: number; stored: number } | undefined;
    let killedAt: number | undefined;
    /** From the kill until the first chunk after it is in Kafka (acknowledged, or spooled and replayed). */
    let heldMs: number | undefined;
    let published = 0;
    try {
      for (const [index, chunk] of chunks.entries()) {
        await publishEvents(bus, chunk);
        published += chunk.length;
        if (killedAt !== undefined && heldMs === undefined) {
          await waitUntil('the spool replayed', async () => (await gauge(spoolBytes)) === 0, {
            timeoutMs: 60_000,
            everyMs: 50,
          });
          heldMs = Date.now() - killedAt;
        }
        // A third in, with the ingest storing: the victim dies.
        if (index === Math.floor(chunks.length / 3)) {
          const stored = await waitUntil(
            'the ingest storing',
            async () => ((await rawCount()) > 0 ? rawCount() : 0),
            { timeoutMs: 60_000, retryErrors: true },
          );
          kill(`kafka${victim}`);
          killedAt = Date.now();
          atKill = { published, stored };
        }
      }
      await failedOver(victim);
      // What the bus could not hand to Kafka waits in its spool (and what came after, behind it):
      // a producer that stops keeps it there for its next start, so the test waits for the replay.
      await bus.drain();
    } finally {
      await bus.close();
    }
    const spooled = warnings
      .map((w) => Number(/spooling (\d+) event/.exec(w)?.[1] ?? 0))
      .reduce((a, b) => a + b, 0);
    const fenced = stack.kafkaFences().find((f) => f.broker === victim && f.at >= killedAt! - 1_000);
    console.log(
      `kafka-faults: broker ${victim} killed at ${JSON.stringify(atKill)} of ${events.length}; ` +
        `fenced ${fenced ? fenced.at - killedAt! : '(not logged)'} ms after the kill; the chunk after the kill ` +
        `in Kafka ${heldMs} ms after it; ${spooled} event(s) spooled while Kafka refused them`,
    );
    // Every partition has a replica on the dead broker, so Kafka acknowledges nothing (acks -1)
    // until the controller fences it: 2.5-3 s after the kill with the cluster's 3 s session and
    // 0.5 s heartbeats (stack/kafka-cluster.properties), then the bus's next retry (at most 0.5 s
    // apart). With Kafka's defaults (9 s, 2 s) the fence comes 7-9 s after the kill.
    expect(heldMs).toBeLessThan(7_000);
    // The fault landed mid-stream: events were still to publish, and the ingest had stored some
    // but not all of those published (rows may wait in Kafka, or be on their way).
    expect(atKill!.published).toBeLessThan(events.length);
    expect(atKill!.stored).toBeGreaterThan(0);
    expect(atKill!.stored).toBeLessThan(events.length);

    const stored = await waitUntil(
      'every event stored',
      async () => {
        const [line] = await sql('SELECT uniqExact(event_id), count() FROM events_raw');
        const [unique, rows] = line.split('\t').map(Number);
        return unique >= events.length ? { unique, rows } : undefined;
      },
      { timeoutMs: 120_000, retryErrors: true },
    );
    console.log(`kafka-faults: ${stored.rows} raw rows for ${events.length} events after the kill`);
    // No event lost, none foreign: the ids stored are exactly the ids published.
    const ids = new Set(events.map((e) => e.event_id));
    const storedIds = await sql('SELECT DISTINCT event_id FROM events_raw');
    expect(storedIds.length).toBe(ids.size);
    expect(storedIds.every((e) => ids.has(e))).toBe(true);
    // None doubled: one row per event once deduplicated, and the closed days' reports (sealed by
    // the ingest) equal the hand count.
    expect(await finalRows('1')).toBe(events.length);
    publishedSoFar.push(...events);
    await expectSealedToHandCount(store, RANGE, publishedSoFar, 90_000);
    expect(ingest.exited).toBe(false);

    // Back in: the broker catches up and rejoins every ISR (the next test kills another).
    stack.up(`kafka${victim}`);
    await backInSync();
  });

  it('kill -9 of a broker with a publish out, then the bus closes: close spools what Kafka has not acknowledged within its bound, and the bus started again on that spool delivers it, each event stored once', async () => {
    // Ids of their own: the same generator's events as above, counted again in the hand count.
    const events = demoEvents(3, 1000).map((e) => ({ ...e, event_id: `closing-${e.event_id}` }));
    const warnings: string[] = [];
    diagnoseOnFailure(warnings);
    const settings = loadConfig(BaseSettings, {
      ...kafkaEnv,
      KAFKA_CLIENT_ID: `kf-closing-${id}`,
      KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-kf-spool-')),
    });
    // close()'s wait bounded at 1 s, under the 2.5 s before the controller fences the dead broker
    // (3 s session, 0.5 s heartbeats): the close outlasts Kafka's silence whatever the machine's pace.
    // The apps' 3 s default would race the fence.
    const bus = new KafkaEventBus({
      ...kafkaBusOptions(settings, (message) => warnings.push(message)),
      closeTimeoutMs: 1_000,
    });
    // Connected, the topics' partitions known: what follows goes straight to the brokers.
    await publishEvents(bus, events.slice(0, 100));
    const victim = await leaderOf(TOPIC_BY_TYPE.impression);
    kill(`kafka${victim}`);
    // Every partition has a replica on the dead broker: Kafka acknowledges none of these (acks from
    // every in-sync replica) until the controller fences it and shrinks the ISRs, seconds later.
    let settled = false;
    const out = publishEvents(bus, events.slice(100)).finally(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const inFlightAtClose = await gauge(eventsInFlight);
    expect(settled).toBe(false);
    expect(inFlightAtClose).toBeGreaterThan(0);
    await bus.close();
    // Every publish accepted resolved (none refused by a closed spool), and nothing is out any more.
    await expect(out).resolves.toBeUndefined();
    expect(await gauge(eventsInFlight)).toBe(0);
    const spooled = bytesUnder(settings.KAFKA_SPOOL_DIR);
    console.log(
      `kafka-faults: broker ${victim} killed with ${inFlightAtClose} event(s) out; ` +
        `the closed bus left ${spooled} byte(s) in its spool; ${warnings.filter((w) => w.startsWith('closing')).join(' | ')}`,
    );
    // The fault's mark: the close outlasted Kafka's silence and spooled.
    expect(spooled).toBeGreaterThan(0);

    // The next start on the same spool (same client id) replays it once the partitions have a leader.
    const again = eventBusFrom(settings, (message) => warnings.push(message));
    try {
      await again.drain();
    } finally {
      await again.close();
    }
    expect(bytesUnder(settings.KAFKA_SPOOL_DIR)).toBe(0);
    publishedSoFar.push(...events);
    const all = new Set(publishedSoFar.map((e) => e.event_id));
    await waitUntil(
      'every event stored',
      async () => Number((await sql('SELECT uniqExact(event_id) FROM events_raw'))[0]) >= all.size,
      { timeoutMs: 120_000, retryErrors: true },
    );
    const storedIds = await sql('SELECT DISTINCT event_id FROM events_raw');
    expect(storedIds.length).toBe(all.size);
    expect(storedIds.every((e) => all.has(e))).toBe(true);
    // Sent twice if a send landed after it was spooled (at least once): counted once all the same.
    expect(await finalRows('1')).toBe(all.size);
    await expectSealedToHandCount(store, RANGE, publishedSoFar, 90_000);

    stack.up(`kafka${victim}`);
    await backInSync();
  });

  it('two auction processes serving while the broker coordinating the ingest group (and leading partitions) is killed: every view and click they answered is stored once, the ingest lives on', async () => {
    /** The auctions' warnings (the bus's among them), for a failure's diagnosis. */
    const auctionLog: string[] = [];
    diagnoseOnFailure(auctionLog);
    const dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 5, max: 5 } });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps = [{ ...doc.dsps[0], endpoint: dsp.bidUrl, timeoutMs: 1000 }];
    });
    /** An auction app; started again on the same spool directory (same client id), it replays what is left there. */
    const startAuction = async (name: string, spoolDir: string) => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const child = spawn(process.execPath, [AUCTION], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          ...kafkaEnv,
          KAFKA_CLIENT_ID: `kf-auction-${name}-${id}`,
          KAFKA_SPOOL_DIR: spoolDir,
          AUCTION_PORT: String(port),
          AUCTION_PUBLIC_URL: url,
          AUCTION_TMAX_MS: '1000',
          AUCTION_WORKERS: '1',
          // A loaded test machine's lag is not what this test is about.
          AUCTION_SHED_LAG_MS: '0',
          CATALOG_PATH: catalog,
          REDIS_URL: `redis://127.0.0.1:${stack.ports.CLUSTER_REDIS_PORT}`,
          REDIS_KEY_PREFIX: `kf:${id}:`,
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) =>
        auctionLog.push(
          ...chunk
            .split('\n')
            .filter(Boolean)
            .map((line) => `auction ${name}: ${line}`),
        ),
      );
      children.push(child);
      await waitUntil(`auction ${name} up`, async () => (await fetch(`${url}/health`)).status === 200, {
        timeoutMs: 90_000,
        retryErrors: true,
      });
      return { name, url, child, spoolDir };
    };
    /**
     * Waits until each auction has nothing out (every event in Kafka or its spool) and nothing
     * spooled, then stops them with SIGTERM: each sends what it still holds before it exits.
     */
    const settleAndStop = async (running: Awaited<ReturnType<typeof startAuction>>[]) => {
      for (const { name, url } of running) {
        await waitUntil(
          `auction ${name}'s events all in Kafka`,
          async () =>
            (await metric(url, 'adx_events_in_flight')) === 0 &&
            (await metric(url, 'adx_event_spool_bytes')) === 0,
          { timeoutMs: 60_000, retryErrors: true },
        );
      }
      await Promise.all(
        running.map(
          ({ child }) =>
            new Promise((resolve) => {
              // 'close': exited, and its output read to the end (the last warnings come at exit).
              child.once('close', resolve);
              child.kill('SIGTERM');
            }),
        ),
      );
    };
    const auctions = await Promise.all(
      ['a', 'b'].map((name) => startAuction(name, mkdtempSync(path.join(tmpdir(), 'adx-kf-spool-')))),
    );
    // The broker coordinating the ingest's group, which leads partitions of the topics too: the
    // new coordinator does not know the ingest's member, whose next commit is refused.
    const victim = await coordinatorOf(group);
    const { topics: led } = await admin.fetchTopicMetadata({
      topics: EVENT_TOPICS.map((t) => `${prefix}${t}`),
    });
    expect(led.flatMap((t) => t.partitions).filter((p) => p.leader === victim).length).toBeGreaterThan(0);
    // Hand count: the ad requests answered with an ad or its landing page (302), first views,
    // reopens and clicks apart.
    const answered = { first: 0, reopen: 0, click: 0 };
    const tag = async (auction: number, endpoint: 'img' | 'click', recipient: string) => {
      const res = await request(
        `${auctions[auction].url}/${endpoint}/slot-1-1-2?placement=p-${id}&recipient=${recipient}`,
        { headers: { connection: 'close' } },
      );
      await res.body.dump();
      return res.statusCode === 302;
    };
    try {
      const readers = 240;
      for (let from = 0; from < readers; from += 20) {
        if (from === readers / 3) {
          kill(`kafka${victim}`);
        }
        // Each reader's first view on one process, the reopen on the other: both publish at once.
        const batch = Array.from({ length: 20 }, (_, i) => `kf-reader-${from + i}`);
        const firsts = await Promise.all(batch.map((r, i) => tag(i % 2, 'img', r)));
        answered.first += firsts.filter(Boolean).length;
        const reopens = await Promise.all(batch.map((r, i) => tag((i + 1) % 2, 'img', r)));
        answered.reopen += reopens.filter(Boolean).length;
        const clicks = await Promise.all(batch.filter((_, i) => i % 4 === 0).map((r) => tag(1, 'click', r)));
        answered.click += clicks.filter(Boolean).length;
      }
      // Sends out to the dead broker's partitions wait seconds for Kafka's failover, while the
      // requests are answered: the auctions' events in flight are waited for, not only their spools.
      await settleAndStop(auctions);
    } finally {
      await dsp.close();
    }
    const leftInSpools = auctions.map(({ spoolDir }) => bytesUnder(spoolDir));
    console.log(
      `kafka-faults: auctions answered ${JSON.stringify(answered)}, broker ${victim} killed, ` +
        `spool bytes left at exit ${JSON.stringify(leftInSpools)}`,
    );
    expect(answered).toEqual({ first: 240, reopen: 240, click: 60 });
    // What a process left in its spool is delivered at its next start: each starts again on its
    // spool, replays it and stops (docs/distributed.md, the spool).
    if (leftInSpools.some((bytes) => bytes > 0)) {
      const again = await Promise.all(auctions.map(({ name, spoolDir }) => startAuction(name, spoolDir)));
      await settleAndStop(again);
      expect(again.map(({ spoolDir }) => bytesUnder(spoolDir))).toEqual([0, 0]);
    }

    const today = new Date().toISOString().slice(0, 10);
    const counts = async () =>
      Object.fromEntries(
        (
          await sql(
            `SELECT type, reopens, uniqExact(event_id) FROM events_raw WHERE event_date >= '${today}' ` +
              `AND placement_id = 'p-${id}' GROUP BY type, reopens`,
          )
        ).map((line) => {
          const [type, reopens, n] = line.split('\t');
          return [`${type}${reopens === '1' ? ' reopen' : ''}`, Number(n)];
        }),
      );
    const expected = {
      impression: answered.first,
      'impression reopen': answered.reopen,
      click: answered.click,
    };
    const got = await waitUntil(
      'every answered request stored',
      async () => {
        const now = await counts();
        return deepEqual(now, expected) ? now : undefined;
      },
      { timeoutMs: 120_000, retryErrors: true },
    ).catch(counts);
    expect(got).toEqual(expected);
    // The ingest lived through the broker's death (kafkajs's consumer stopped for good would have made it exit).
    expect(ingest.exited).toBe(false);
    // None doubled once deduplicated (FINAL on each shard's local table).
    const where = `event_date >= '${today}' AND placement_id = 'p-${id}'`;
    expect(await finalRows(where)).toBe(
      Number((await sql(`SELECT uniqExact(event_id) FROM events_raw WHERE ${where}`))[0]),
    );
  });

  /** What a failure needs explained: the ingest's state and output, the store's counts, the bus's warnings. */
  function diagnoseOnFailure(warnings: readonly string[]): void {
    onTestFailed(async () => {
      const counts = await sql(
        'SELECT type, count(), uniqExact(event_id) FROM events_raw GROUP BY type',
      ).catch((error: Error) => [error.message]);
      const lag = await groupLag().catch((error: Error) => error.message);
      const nodes = await Promise.all(
        ([1, 2, 3, 4] as const).map((node) =>
          sqlOn(
            node,
            'SELECT count(), (SELECT groupArray(table) FROM system.replicas WHERE is_readonly OR queue_size > 0) FROM events_raw',
          ).then(
            ([line]) => `node ${node}: ${line}`,
            (error: Error) => `node ${node}: ${error.message.slice(0, 120)}`,
          ),
        ),
      );
      console.log(
        [
          `ingest exited: ${ingest.exited}, health ${await ingest.health()}`,
          `events_raw: ${counts.join(' | ')}`,
          `the ingest's group behind Kafka's ends: ${lag}`,
          `raw rows and replicas read-only or with a queue per node: ${nodes.join(' | ')}`,
          `warnings: ${warnings.slice(-10).join(' | ')}`,
          'ingest log (last 40 lines):',
          ...ingest.log.slice(-40),
        ].join('\n'),
      );
    });
  }

  /** Per topic, the records the ingest's group has not committed yet (Kafka's ends less its offsets). */
  async function groupLag(): Promise<string> {
    const out: string[] = [];
    for (const topic of EVENT_TOPICS.map((t) => `${prefix}${t}`)) {
      const [ends, [committed]] = await Promise.all([
        admin.fetchTopicOffsets(topic),
        admin.fetchOffsets({ groupId: group, topics: [topic] }),
      ]);
      const at = new Map(committed.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]));
      out.push(
        `${topic.slice(prefix.length)} ${ends.map((e) => Number(e.high) - (at.get(e.partition) ?? 0)).join('/')}`,
      );
    }
    return out.join(', ');
  }

  /** A gauge of this process (the bus under test runs here). */
  async function gauge(metric: typeof eventsInFlight): Promise<number> {
    return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
  }

  async function metric(url: string, name: string): Promise<number | undefined> {
    const text = await (await fetch(`${url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  }

  function kill(node: ClusterNode): void {
    stack.kill(node);
  }

  /** Rows matching `where` once deduplicated: FINAL on each shard's local table, summed. */
  async function finalRows(where: string): Promise<number> {
    const perShard = await Promise.all(
      ([1, 3] as const).map((node) => sqlOn(node, `SELECT count() FROM events_raw FINAL WHERE ${where}`)),
    );
    return perShard.reduce((sum, [n]) => sum + Number(n), 0);
  }

  async function rawCount(): Promise<number> {
    return Number((await sql('SELECT count() FROM events_raw'))[0]);
  }
});

function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) {
    chunks.push(items.slice(i, i + size));
  }
  return chunks;
}

/** Bytes of the files under `dir`, recursively. */
function bytesUnder(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const at = path.join(dir, entry.name);
    return sum + (entry.isDirectory() ? bytesUnder(at) : statSync(at).size);
  }, 0);
}
