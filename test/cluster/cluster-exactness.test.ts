import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventBus, TOPIC_BY_TYPE, toMessage, type AdEvent } from '@app/events';
import type { StoreQuery } from '@app/report-model';
import { distributedDatabase, shardOfSource, type ClickHouseReportStore } from '@app/report-store';
import {
  CLUSTER_CLICKHOUSE_NODES,
  ClusterStack,
  IngestProcess,
  ReportClient,
  ReportingProcess,
  TEST_USERS,
  clickHouseSql,
  clusterTiersAgainstRaw,
  demoEvents,
  expectedBySplit,
  requireOrSkip,
  stackServersInstalled,
  unsealedDays,
  waitUntil,
} from '@app/testing';

/**
 * The product on the ClickHouse cluster (2 shards x 2 replicas, ZooKeeper, three Kafka brokers):
 * two ingest processes of one group store demo traffic with duplicates (a tenth of the events
 * produced twice), one of them is killed with SIGKILL while an INSERT runs and started again
 * (until a kill is shown to have made Kafka deliver stored events again), and once they caught up
 * and sealed: each shard holds whole sources and so every copy of an event (the routing), every
 * tier of every replica equals its recomputation from that shard's raw events, and the reports,
 * read through the Distributed tables by the store and by the reporting app over POST /api, equal
 * a hand count and the same reports of one server holding the same events.
 */
const ROOT = path.resolve(__dirname, '../..');
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
const RANGE = { start: DAYS[0], end: DAYS[DAYS.length - 1] };
/** Kills tried until one lands between a batch's INSERT and its commit: each gets a part of the events. */
const ATTEMPTS = 4;
type Node = (typeof CLUSTER_CLICKHOUSE_NODES)[number];

describe.runIf(requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java'))(
  'exactness on the ClickHouse cluster',
  () => {
    const id = `${process.pid}_${Date.now()}`;
    const database = `adx_cluster_${id}`;
    const prefix = `cluster-${id}.`;
    let stack: ClusterStack;
    const ingests: IngestProcess[] = [];
    const apps: ReportingProcess[] = [];
    const sqlOn = (node: Node) => clickHouseSql(() => stack.clickhouseUrl(node));
    const number = async (node: Node, query: string) => Number((await sqlOn(node)(query))[0] ?? 0);

    async function startIngest(name: string): Promise<IngestProcess> {
      const ingest = await IngestProcess.start({
        LOG_LEVEL: 'warn',
        INGEST_GROUP_ID: `cluster-${id}`,
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        KAFKA_REPLICATION_FACTOR: '3',
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_CLIENT_ID: `cluster-ingest-${name}-${id}`,
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
        SEAL_INTERVAL_MS: '500',
        ...stack.storeEnv(database),
      });
      ingests.push(ingest);
      return ingest;
    }

    /** The reporting app on `env`'s store, a client of its API. */
    async function startReporting(env: Record<string, string>): Promise<ReportClient> {
      const app = await ReportingProcess.start(env, { timeoutMs: 90_000 });
      apps.push(app);
      return new ReportClient(app.url, () => new Date());
    }

    beforeAll(async () => {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
      stack = await ClusterStack.create('exactness');
      stack.up();
    }, 360_000);

    afterAll(async () => {
      for (const ingest of ingests) {
        if (!ingest.exited) {
          console.log(ingest.log.slice(-20).join('\n'));
        }
        await ingest.kill();
      }
      for (const app of apps) {
        app.kill();
      }
      stack?.destroy();
    }, 120_000);

    it('two ingests, duplicates, a kill -9 between INSERT and commit: every tier of every replica and every report exact, as on one server', async () => {
      const started = Date.now();
      const store = stack.store(database);
      await store.migrate();
      const producer = new KafkaEventBus({
        brokers: stack.kafkaBrokers,
        clientId: `cluster-producer-${id}`,
        topicPrefix: prefix,
        partitions: 4,
        replicationFactor: 3,
        spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
        spoolMaxBytes: 256 * 1024 * 1024,
        concurrentPartitions: 2,
      });
      const events = demoEvents(DAYS.length + 1, 4000).filter((e) => DAYS.includes(e.ts.slice(0, 10)));
      // A tenth of the events produced twice (a producer retry, a spool replay): same id, same key.
      const published: AdEvent[] = [];
      const publish = async (batch: readonly AdEvent[]) => {
        published.push(...batch);
        for (const [type, topic] of Object.entries(TOPIC_BY_TYPE)) {
          const messages = batch.filter((e) => e.type === type).map(toMessage);
          for (let i = 0; i < messages.length; i += 500) {
            await producer.publish(topic, messages.slice(i, i + 500));
          }
        }
      };
      const parts = Array.from({ length: ATTEMPTS }, (_, i) => {
        const part = events.slice(
          Math.floor((i * events.length) / ATTEMPTS),
          Math.floor(((i + 1) * events.length) / ATTEMPTS),
        );
        return [...part, ...part.filter((_, j) => j % 10 === 0)];
      });
      const unique = () => new Set(published.map((e) => e.event_id)).size;
      const storedIds = () =>
        number(
          1,
          // The replicas the ingests write to (the first of each shard): a random one may lag behind.
          `SELECT uniqExact(event_id) FROM ${distributedDatabase(database)}.events_raw SETTINGS load_balancing = 'in_order'`,
        );
      const replayed = async () =>
        (
          await Promise.all(
            ingests.filter((i) => !i.exited).map((i) => i.metric('adx_ingest_replayed_events_total')),
          )
        ).reduce((a, b) => a + b, 0);

      let victim = await startIngest('a0');
      await startIngest('b');
      const kills: { storedAtKill: number; published: number; replayed: number }[] = [];
      let attempt = 0;
      for (; attempt < ATTEMPTS; attempt += 1) {
        await publish(parts[attempt]);
        const floor = (await storedIds()) + 300;
        // Killed as soon as this part's rows start to arrive: while the victim's INSERTs for its
        // partitions run, or between one and its batch's commit.
        await waitUntil(`${floor} events stored`, async () => (await storedIds()) > floor, {
          timeoutMs: 60_000,
          retryErrors: true,
        });
        const storedAtKill = await storedIds();
        await victim.kill();
        victim = await startIngest(`a${attempt + 1}`);
        await waitUntil('every event stored', async () => (await storedIds()) === unique(), {
          timeoutMs: 120_000,
          retryErrors: true,
        });
        // Events stored before the kill whose offsets Kafka had not committed come again, and the
        // ingest holding their partition now leaves them out (the shard's ingested_offsets).
        // They come once the group has rebalanced: a few seconds after the restart.
        await waitUntil('events replayed', async () => (await replayed()) > 0, {
          timeoutMs: 15_000,
          retryErrors: true,
        }).catch(() => undefined);
        kills.push({ storedAtKill, published: unique(), replayed: await replayed() });
        if (kills[kills.length - 1].replayed > 0) {
          break;
        }
      }
      for (attempt += 1; attempt < ATTEMPTS; attempt += 1) {
        await publish(parts[attempt]);
      }
      console.log(`cluster kills: ${JSON.stringify(kills)}`);
      const effective = kills.find((k) => k.replayed > 0);
      expect(effective, 'a kill after an INSERT and before its commit').toBeDefined();

      // Caught up, then sealed by the ingests' own sealers (one pass per shard, on its first replica).
      await waitUntil('every event stored', async () => (await storedIds()) === unique(), {
        timeoutMs: 120_000,
        retryErrors: true,
      });
      const caughtUp = Date.now();
      for (const node of [1, 3] as const) {
        await waitUntil(
          `node${node} sealed`,
          async () => (await unsealedDays(sqlOn(node), database, DAYS)).length === 0,
          { timeoutMs: 120_000, retryErrors: true },
        );
      }
      console.log(
        `cluster: ${published.length} events published (${unique()} distinct), sealed on both shards ${((Date.now() - caughtUp) / 1000).toFixed(1)} s after catching up`,
      );
      for (const ingest of ingests) {
        await ingest.kill();
      }

      // The routing: each source on one shard, the one shardOfSource names, so every copy of an
      // event is on one shard (their ids add up to the cluster's).
      const sourcesOf = async (node: Node) =>
        (
          await sqlOn(node)(`SELECT DISTINCT source FROM ${database}.events_raw ORDER BY source FORMAT TSV`)
        ).sort();
      const [first, second] = [await sourcesOf(1), await sourcesOf(3)];
      expect(first.length).toBeGreaterThan(0);
      expect(second.length).toBeGreaterThan(0);
      expect(first.filter((s) => second.includes(s))).toEqual([]);
      expect(
        first.every((s) => shardOfSource(s, 2) === 0) && second.every((s) => shardOfSource(s, 2) === 1),
      ).toBe(true);
      const idsOn = (node: Node) => number(node, `SELECT uniqExact(event_id) FROM ${database}.events_raw`);
      expect((await idsOn(1)) + (await idsOn(3))).toBe(unique());
      expect(await idsOn(1)).toBeGreaterThan(0);
      expect(await idsOn(3)).toBeGreaterThan(0);
      // Duplicates were stored (on their shard) and counted once.
      expect(
        await number(1, `SELECT count() FROM ${distributedDatabase(database)}.events_raw`),
      ).toBeGreaterThan(unique());

      // Every tier of every replica against the recomputation from its shard's raw events.
      const pairs = await clusterTiersAgainstRaw(
        Object.fromEntries(CLUSTER_CLICKHOUSE_NODES.map((n) => [`node${n}`, sqlOn(n)])),
        database,
      );
      expect(pairs.length).toBeGreaterThan(4 * 40);
      for (const { what, tier, raw } of pairs) {
        expect(tier, what).toEqual(raw);
      }
      // The sealers ran on nodes 1 and 3: the other replicas hold their swaps (markers included)
      // through replication alone (REPLACE PARTITION on ReplicatedMergeTree, 18.16).
      for (const node of [2, 4] as const) {
        expect(await unsealedDays(sqlOn(node), database, DAYS), `node${node}`).toEqual([]);
      }

      // One server holding the same events (a database of node 1 with the single-server schema).
      const single = stack.store(`${database}_single`, { cluster: undefined });
      await single.migrate();
      const once = [...new Map(published.map((e) => [e.event_id, e])).values()];
      await single.ingest(
        'single/0',
        once.map((event, i) => ({ offset: String(i), event })),
      );
      await single.seal(new Date());
      const query = (split: string, tier: 'exact' | 'inexact'): StoreQuery => ({
        range: RANGE,
        split,
        filters: [],
        scope: {},
        tier,
      });
      // Rows in no order (a Distributed read merges the shards' answers as they come): by key.
      const byKey = async (reading: ClickHouseReportStore, q: StoreQuery) =>
        Object.fromEntries((await reading.query(q)).map((r) => [r.key, r.measures]));
      for (const split of ['day', 'campaign_id', 'publisher_id', 'creative_id']) {
        const rows = await byKey(store, query(split, 'exact'));
        expect(rows, split).toEqual(Object.fromEntries(expectedBySplit(once, split)));
        expect(rows, split).toEqual(await byKey(single, query(split, 'exact')));
      }
      for (const split of ['country', 'zip', 'device_model', 'hour', 'campaign_id']) {
        const rows = await byKey(store, query(split, 'inexact'));
        expect(Object.keys(rows).length, split).toBeGreaterThan(0);
        expect(rows, split).toEqual(await byKey(single, query(split, 'inexact')));
      }
      await store.close();
      await single.close();

      // POST /api on the cluster and on the one server: the same answers, the campaigns a hand count.
      const clusterApi = await startReporting(stack.storeEnv(database));
      const singleApi = await startReporting({
        CLICKHOUSE_URL: stack.clickhouseUrl(1),
        CLICKHOUSE_DATABASE: `${database}_single`,
      });
      const demoAdv = TEST_USERS.adv;
      const mine = once.filter((e) => ['adv-1', 'adv-2', 'adv-3'].includes(e.advertiser_id));
      const request = (split: string) => ({
        type: 'advertiser',
        startDate: DAYS[0],
        endDate: DAYS[DAYS.length - 1],
        splits: [split],
        columns: ['impressions', 'clicks', 'conversions', 'spend'],
      });
      for (const split of ['campaign_id', 'country', 'day']) {
        const fromCluster = await clusterApi.json(demoAdv, request(split));
        const fromSingle = await singleApi.json(demoAdv, request(split));
        expect(fromCluster.status, fromCluster.text).toBe(200);
        expect(fromSingle.status, fromSingle.text).toBe(200);
        expect(fromCluster.json<unknown[]>().length, split).toBeGreaterThan(0);
        expect(fromCluster.json(), split).toEqual(fromSingle.json());
      }
      const campaigns = await clusterApi.json(demoAdv, request('campaign_id'));
      expect(
        Object.fromEntries(
          campaigns
            .json<Record<string, unknown>[]>()
            .map((r) => [String(r.campaign_id), [r.clicks, r.conversions]]),
        ),
      ).toEqual(
        Object.fromEntries(
          [...expectedBySplit(mine, 'campaign_id')].map(([k, m]) => [String(k), [m.clicks, m.conversions]]),
        ),
      );
      await producer.close();
      console.log(
        `cluster exactness: ${((Date.now() - started) / 1000).toFixed(1)} s after the cluster was up`,
      );
    }, 480_000);
  },
);
