import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreQuery } from '@app/report-model';
import { shardOfSource, type ClickHouseReportStore } from '@app/report-store';
import {
  ClusterStack,
  ReportClient,
  ReportingProcess,
  TEST_USERS,
  clickHouseSql,
  demoEvents,
  expectedBySplit,
  requireOrSkip,
  stackServersInstalled,
  unsealedDays,
  waitUntil,
} from '@app/testing';

/**
 * `kill -9` of the ClickHouse node the reports read through (`CLICKHOUSE_URL`, node 1 of shard
 * 01) on a private cluster (ZooKeeper and 2 shards x 2 replicas; no Kafka: the store is given the
 * events directly): while it is down, its shard partner (node 2) stays up and the reports, through
 * the store and through `POST /api` of the built reporting app, still answer from the other nodes
 * and equal a hand count; once it is started again (its ghost check runs), they still do.
 */
const ROOT = path.resolve(__dirname, '../..');
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
type Node = 1 | 2 | 3 | 4;

describe.runIf(requireOrSkip(stackServersInstalled(), 'clickhouse-server and java'))(
  'reports when a ClickHouse replica is killed',
  () => {
    const id = `${process.pid}_${Date.now()}`;
    const database = `adx_failover_${id}`;
    let stack: ClusterStack;
    let app: ReportingProcess | undefined;
    const sqlOn = (node: Node) => clickHouseSql(() => stack.clickhouseUrl(node));

    beforeAll(() => {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    }, 120_000);
    beforeAll(async () => {
      stack = await ClusterStack.create('failover');
      stack.up('zookeeper', 'clickhouse1', 'clickhouse2', 'clickhouse3', 'clickhouse4');
    }, 300_000);

    afterAll(() => {
      app?.kill();
      stack?.destroy();
    }, 120_000);

    it('kill -9 of the node in CLICKHOUSE_URL: the store and POST /api answer from the other nodes, equal to a hand count, and again after its restart', async () => {
      const started = Date.now();
      const store = stack.store(database);
      await store.migrate();
      // The Distributed tables that let any node answer for the cluster exist on every node.
      for (const node of [1, 2, 3, 4] as const) {
        expect(
          await sqlOn(node)(
            `SELECT count() FROM system.tables WHERE database = '${database}_cluster' AND name = 'events_raw' AND engine = 'Distributed' FORMAT TSV`,
          ),
          `node${node}`,
        ).toEqual(['1']);
      }

      // Two sources, one on each shard; a tenth of each source's events delivered twice.
      const events = demoEvents(DAYS.length + 1, 1500).filter((e) => DAYS.includes(e.ts.slice(0, 10)));
      const sources = ['failover-events/0', 'failover-events/1'];
      expect(sources.map((s) => shardOfSource(s, 2))).toEqual([0, 1]);
      for (const [i, source] of sources.entries()) {
        const mine = events.filter((_, j) => j % 2 === i);
        // The copies in the same INSERT on one shard, a second one (as a redelivery would) on the
        // other: a day partition of a replicated table written by one INSERT has highest block 0.
        const copies = mine.filter((_, j) => j % 10 === 0);
        const batches = i === 0 ? [[...mine, ...copies]] : [mine, copies];
        let offset = 0;
        for (const batch of batches) {
          await store.ingest(
            source,
            batch.map((event) => ({ offset: String(offset++), event })),
          );
        }
      }
      // Sealed on nodes 1 and 3, and through replication on nodes 2 and 4. A pass skips a shard
      // whose other replica still has raw parts to fetch: sealed again until every node holds it.
      await waitUntil(
        'every node sealed',
        async () => {
          // A pass may fail while a replica catches up: the next one seals.
          await store.seal(new Date()).catch(() => undefined);
          for (const node of [1, 2, 3, 4] as const) {
            if ((await unsealedDays(sqlOn(node), database, DAYS)).length > 0) {
              return false;
            }
          }
          return true;
        },
        { timeoutMs: 90_000 },
      );
      // Sealed for good: a pass with no new raw block seals no day again.
      expect((await store.seal(new Date())).sealed).toEqual([]);

      const exact = (split: string): StoreQuery => ({
        range: { start: DAYS[0], end: DAYS[DAYS.length - 1] },
        split,
        filters: [],
        scope: {},
        tier: 'exact',
      });
      const byKey = async (reading: ClickHouseReportStore, q: StoreQuery) =>
        Object.fromEntries((await reading.query(q)).map((r) => [r.key, r.measures]));
      const splits = ['day', 'campaign_id', 'publisher_id'];
      const handCount = (split: string) => Object.fromEntries(expectedBySplit(events, split));
      const inexact: StoreQuery = { ...exact('country'), tier: 'inexact' };
      for (const split of splits) {
        expect(await byKey(store, exact(split)), split).toEqual(handCount(split));
      }
      const inexactBefore = await byKey(store, inexact);
      expect(Object.keys(inexactBefore).length).toBeGreaterThan(0);

      // The reporting app on the cluster, reading through node 1.
      app = await ReportingProcess.start(stack.storeEnv(database), { timeoutMs: 90_000 });
      const api = new ReportClient(app.url, () => new Date());
      const demoAdv = TEST_USERS.adv;
      const campaigns = async () => {
        const response = await api.json(demoAdv, {
          type: 'advertiser',
          startDate: DAYS[0],
          endDate: DAYS[DAYS.length - 1],
          splits: ['campaign_id'],
          columns: ['impressions', 'clicks', 'conversions', 'spend'],
        });
        expect(response.status, response.text).toBe(200);
        return Object.fromEntries(
          response
            .json<Record<string, unknown>[]>()
            .map((r) => [String(r.campaign_id), [r.clicks, r.conversions]]),
        );
      };
      const advertisers = events.filter((e) => ['adv-1', 'adv-2', 'adv-3'].includes(e.advertiser_id));
      const apiHandCount = Object.fromEntries(
        [...expectedBySplit(advertisers, 'campaign_id')].map(([k, m]) => [
          String(k),
          [m.clicks, m.conversions],
        ]),
      );
      expect(Object.keys(apiHandCount).length).toBeGreaterThan(0);
      expect(await campaigns()).toEqual(apiHandCount);

      // kill -9 of node 1; its shard partner, node 2, stays up.
      stack.kill('clickhouse1');
      await waitUntil(
        'node 1 down',
        () =>
          fetch(`${stack.clickhouseUrl(1)}/ping`).then(
            () => false,
            () => true,
          ),
        { timeoutMs: 30_000 },
      );
      expect((await sqlOn(2)('SELECT 1 FORMAT TSV'))[0]).toBe('1');
      const down = Date.now();
      // The store that was reading through node 1, and a new one (its first read after the kill).
      const fresh = stack.store(database);
      for (const reading of [store, fresh]) {
        for (const split of splits) {
          expect(await byKey(reading, exact(split)), split).toEqual(handCount(split));
        }
        expect(await byKey(reading, inexact)).toEqual(inexactBefore);
        await reading.ping();
      }
      await fresh.close();
      expect(await campaigns()).toEqual(apiHandCount);
      console.log(
        `replica failover: reports answered ${((Date.now() - down) / 1000).toFixed(1)} s after the kill`,
      );

      // Node 1 started again once its process is gone (a killed process stays a zombie for a moment,
      // which the start script takes as running): its start time changed, so the reads check it
      // for ghost days first.
      const pid = Number(
        readFileSync(path.join(stack.dir, 'cluster', 'clickhouse1', 'clickhouse.pid'), 'utf8'),
      );
      await waitUntil(
        'the killed process gone',
        async () => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        },
        { timeoutMs: 30_000 },
      );
      stack.up('clickhouse1');
      for (const split of splits) {
        expect(await byKey(store, exact(split)), split).toEqual(handCount(split));
      }
      expect(await campaigns()).toEqual(apiHandCount);
      await store.close();
      console.log(
        `replica failover: ${((Date.now() - started) / 1000).toFixed(1)} s after the cluster was up`,
      );
    }, 240_000);
  },
);
