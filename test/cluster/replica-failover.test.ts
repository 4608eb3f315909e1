import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreQuery } from '@app/report-model';
import { ClickHouseReportStore, shardOfSource } from '@app/report-store';
import {
  CLUSTER_NAME,
  ClusterStack,
  ReportClient,
  clickHouseSql,
  demoEvents,
  expectedBySplit,
  freePort,
  requireOrSkip,
  stackServersInstalled,
  unsealedDays,
} from '@app/testing';
import { until } from '../support/catalog-files';

/**
 * `kill -9` of the ClickHouse node the reports read through (`CLICKHOUSE_URL`, node 1 of shard
 * 01) on a private cluster (ZooKeeper and 2 shards x 2 replicas; no Kafka: the store is given the
 * events directly): while it is down, its shard partner (node 2) stays up and the reports, through
 * the store and through `POST /api` of the built reporting app, still answer from the other nodes
 * and equal a hand count; once it is started again (its ghost check runs), they still do.
 */
const ROOT = path.resolve(__dirname, '../..');
const REPORTING = path.join(ROOT, 'dist/apps/reporting/src/main.js');
const DAYS = ['2026-11-19', '2026-11-20', '2026-11-21'];
type Node = 1 | 2 | 3 | 4;

describe.runIf(requireOrSkip(stackServersInstalled(), 'clickhouse-server and java'))(
  'reports when a ClickHouse replica is killed',
  () => {
    const id = `${process.pid}_${Date.now()}`;
    const database = `adx_failover_${id}`;
    let stack: ClusterStack;
    let app: ChildProcess | undefined;
    const sqlOn = (node: Node) => clickHouseSql(() => stack.clickhouseUrl(node));
    const shards = () => [
      [stack.clickhouseUrl(1), stack.clickhouseUrl(2)],
      [stack.clickhouseUrl(3), stack.clickhouseUrl(4)],
    ];
    const storeOptions = () => ({
      url: stack.clickhouseUrl(1),
      database,
      migrationsDir: 'clickhouse',
      sampleDenominator: 10,
      queryTimeoutMs: 30_000,
      rawRetentionMonths: 120,
      cluster: { name: CLUSTER_NAME, shards: shards() },
    });

    beforeAll(() => {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    }, 120_000);
    beforeAll(async () => {
      stack = await ClusterStack.create('failover');
      stack.up('zookeeper', 'clickhouse1', 'clickhouse2', 'clickhouse3', 'clickhouse4');
    }, 300_000);

    afterAll(() => {
      app?.kill('SIGKILL');
      stack?.destroy();
    }, 120_000);

    it('kill -9 of the node in CLICKHOUSE_URL: the store and POST /api answer from the other nodes, equal to a hand count, and again after its restart', async () => {
      const started = Date.now();
      const store = new ClickHouseReportStore(storeOptions());
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
      await until(
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
        'every node sealed',
        90_000,
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
      const port = await freePort();
      app = spawn(process.execPath, [REPORTING], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          LOG_LEVEL: 'warn',
          REPORTING_PORT: String(port),
          RATE_LIMIT_PER_SECOND: '100',
          CLICKHOUSE_URL: stack.clickhouseUrl(1),
          CLICKHOUSE_DATABASE: database,
          CLICKHOUSE_CLUSTER: CLUSTER_NAME,
          CLICKHOUSE_SHARDS: shards()
            .map((replicas) => replicas.join(','))
            .join(';'),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await until(
        () =>
          fetch(`http://127.0.0.1:${port}/health`).then(
            (r) => r.ok,
            () => false,
          ),
        'the reporting app',
        90_000,
      );
      const api = new ReportClient(`http://127.0.0.1:${port}`, () => new Date());
      const demoAdv = { id: 'demo-adv', token: 'demo-adv-token' };
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
      await until(
        () =>
          fetch(`${stack.clickhouseUrl(1)}/ping`).then(
            () => false,
            () => true,
          ),
        'node 1 down',
        30_000,
      );
      expect((await sqlOn(2)('SELECT 1 FORMAT TSV'))[0]).toBe('1');
      const down = Date.now();
      // The store that was reading through node 1, and a new one (its first read after the kill).
      const fresh = new ClickHouseReportStore(storeOptions());
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
      await until(async () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 'the killed process gone');
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
