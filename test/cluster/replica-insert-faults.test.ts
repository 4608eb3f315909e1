import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { BaseSettings, loadConfig } from '@app/config';
import { EVENT_TOPICS, type AdEvent } from '@app/events';
import { distributedDatabase, type ClickHouseReportStore } from '@app/report-store';
import { eventBusFrom } from '@app/runtime';
import {
  ClusterStack,
  type IngestProcess,
  demoEvents,
  expectedBySplit,
  requireOrSkip,
  stackServersInstalled,
  waitUntil,
} from '@app/testing';
import {
  clusterNodeSql,
  deepEqual,
  exactByCampaign,
  expectSealedToHandCount,
  publishEvents,
  startClusterIngest,
  type ClusterClickHouseNode as Node,
} from '../support/cluster-faults';

/**
 * ClickHouse faults under the ingest's INSERTs on the cluster (docs/distributed.md#faults-on-the-cluster),
 * on a private cluster (2 shards x 2 replicas, ZooKeeper, 3 Kafka brokers) with the built ingest app
 * and events published through the event bus, counted by hand. An INSERT one replica alone holds (the
 * other stopped) is refused, for want of its quorum, and the part it left is counted once after the
 * retry; `kill -9` of the replica the ingest writes shard 02 to: every row whose Kafka offset the
 * ingest committed is on the other replica while the killed one is down, reports answer, the shard's
 * inserts are refused and retried until it is back; a ZooKeeper restart: inserts refused (read-only
 * tables) and retried, the tables writable again within a bound. After each, every id is stored once
 * (after the seal's deduplication) and the closed days' reports equal the hand count.
 */
const available = requireOrSkip(stackServersInstalled(), 'clickhouse-server and java');
const ROOT = path.resolve(__dirname, '../..');
/**
 * 18.16's `replicated_max_ratio_of_wrong_parts` by default: a replica whose parts unknown to ZooKeeper
 * hold more than this share of a table's rows refuses to start (the cluster's configuration sets 1).
 */
const DEFAULT_WRONG_PARTS_RATIO = 0.5;
/** The tables a seal swaps partitions of (`ClosedDaySealer`). */
const SWAPPED_TABLES = ['exact_daily', 'inexact_sample', 'inexact_daily', 'inexact_monthly'];
const RANGE = { start: '2026-01-01', end: '2026-11-21' };
/** How long the tables may stay read-only once ZooKeeper answers again. */
const WRITABLE_AFTER_ZOOKEEPER_MS = 30_000;

describe.runIf(available)('ClickHouse replica and ZooKeeper faults under the ingest on the cluster', () => {
  const id = `${process.pid}_${Date.now()}`;
  const database = `adx_rif_${id}`;
  const prefix = `rif-${id}.`;
  const group = `rif-${id}`;
  let stack: ClusterStack;
  let admin: Admin;
  let store: ClickHouseReportStore;
  let ingest: IngestProcess;
  let kafkaEnv: Record<string, string>;
  /** Every event published so far: the hand count of the closed days' reports. */
  const publishedSoFar: AdEvent[] = [];
  /** Node 3's parts on disk that ZooKeeper lists, when `unexpectedParts` read them. */
  let diskParts = 0;

  const sqlOn = clusterNodeSql(() => stack, database);
  /** Through the Distributed tables (every shard), as the reports read, on node 1. */
  const sql = (query: string) => sqlOn(1, query, distributedDatabase(database));

  beforeAll(async () => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    stack = await ClusterStack.create('insert-faults');
    stack.up(
      'zookeeper',
      'clickhouse1',
      'clickhouse2',
      'clickhouse3',
      'clickhouse4',
      'kafka1',
      'kafka2',
      'kafka3',
    );
    admin = new Kafka({ brokers: stack.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    store = stack.store(database);
    await store.migrate();
    ({ ingest, kafkaEnv } = await startClusterIngest(stack, {
      topicPrefix: prefix,
      group,
      database,
      // CLICKHOUSE_INSERT_QUORUM unset: every replica of the shard.
      env: { INGEST_RETRY_MAX_MS: '1000' },
    }));
    // The ingest makes the topics at subscription: the bus publishes into partitions that exist.
    await waitUntil(
      'the ingest to create its topics',
      async () => {
        const { topics } = await admin.fetchTopicMetadata({
          topics: EVENT_TOPICS.map((t) => `${prefix}${t}`),
        });
        return topics.length === EVENT_TOPICS.length;
      },
      { timeoutMs: 60_000, retryErrors: true },
    );
  }, 360_000);

  afterAll(async () => {
    await ingest?.kill();
    await store?.close().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
    stack?.destroy();
  }, 120_000);

  it('an INSERT only one replica of the shard holds is not acknowledged; the part it left is counted once after the retry', async () => {
    diagnoseOnFailure();
    // The store as the ingest configures it (CLICKHOUSE_INSERT_QUORUM unset), with a short INSERT
    // timeout: the quorum's is half of it, 3 s, well within node 4's ZooKeeper session (10 s).
    const writer = stack.store(database, { insertTimeoutMs: 6_000 });
    const events = demoEvents(3, 100).map((e) => ({ ...e, event_id: `q-${e.event_id}` }));
    const batch = events.map((event, i) => ({ offset: String(i), event }));
    // Partition 1: shard 02, written through node 3.
    const source = `rif-direct-${id}/1`;
    const lagging = pidOf(stack, 'clickhouse4');
    const rowsOn3 = async () =>
      Number((await sqlOn(3, "SELECT count() FROM events_raw WHERE event_id LIKE 'q-%'"))[0]);
    let refusal: Error | undefined;
    // Node 4 stopped: it stays an active replica in ZooKeeper but fetches nothing.
    process.kill(lagging, 'SIGSTOP');
    try {
      refusal = await writer.ingest(source, batch).then(
        () => undefined,
        (error: Error) => error,
      );
    } finally {
      process.kill(lagging, 'SIGCONT');
    }
    try {
      expect(refusal?.message).toMatch(/Timeout while waiting for quorum/);
      // What the refused INSERT left: its raw part on node 3, which replication will carry to node 4.
      const leftBehind = await rowsOn3();
      expect(leftBehind).toBeGreaterThan(0);
      // The ingest's retry: refused while the first part's quorum is pending, then stored.
      const stored = await waitUntil('the retry stored', () => writer.ingest(source, batch), {
        timeoutMs: 60_000,
        retryErrors: true,
      });
      // A redelivery after the acknowledgement changes nothing: its offsets are stored.
      const again = await writer.ingest(source, batch);
      console.log(
        `replica-insert-faults: refused INSERT left ${leftBehind} rows on node 3; the retry stored ${stored.stored}, ` +
          `the redelivery skipped ${again.skipped}; ${await rowsOn3()} raw rows for ${events.length} events`,
      );
      expect(again).toEqual({ stored: 0, skipped: events.length });
    } finally {
      await writer.close();
    }
    publishedSoFar.push(...events);
    await inSync();
    // Raw rows twice, counted once: the seal deduplicates by id.
    await expectStoredOnce(events);
  });

  it("kill -9 of the replica the ingest writes shard 02 to: every committed row on the other replica, reports answer, inserts wait for the replica's return, it starts again with what ZooKeeper does not list detached, nothing lost or doubled", async () => {
    const started = Date.now();
    const events = demoEvents(3, 1000);
    diagnoseOnFailure();
    const retriesBefore = await ingest.metric('adx_ingest_retries_total');
    let killedAt = 0;
    let replacedShare = 0;
    let atKill = 0;
    let fault: Promise<void> | undefined;
    // The fault runs beside the publishing, which goes on meanwhile.
    await publishPaced(`rif-a-${id}`, events, async (published) => {
      if (fault === undefined && published >= events.length / 3) {
        // The ingest is writing shard 02 through node 3, its first replica, and has committed some of
        // its offsets (the publishing waits for it: the fault must find the ingest at work).
        await waitUntil(
          'the ingest storing on shard 02',
          async () => {
            const [n] = await sqlOn(3, "SELECT count() FROM events_raw WHERE event_id NOT LIKE 'q-%'");
            return Number(n) >= 200 && (await committedOffsets()).size > 0;
          },
          { timeoutMs: 60_000, retryErrors: true },
        );
        fault = (async () => {
          // Reports read node 3's sealed tables meanwhile, a slow one (30 s) started every second: the
          // parts a seal's swap replaces stay on node 3's disk, gone from ZooKeeper, while a read that
          // started before the swap runs (deleted seconds after the swap otherwise). Node 3 dies once
          // those parts hold over half of a table's rows on its disk, the state in which 18.16 by
          // default refuses to start (two CI runs of three met it by chance before the test waited).
          let reading = true;
          const reads: Promise<unknown>[] = [];
          const reader = (async () => {
            while (reading) {
              reads.push(
                sqlOn(
                  3,
                  `SELECT sleepEachRow(0.5) FROM (${SWAPPED_TABLES.map((t) => `SELECT 1 FROM ${t}`).join(' UNION ALL ')}) ` +
                    'SETTINGS max_threads = 1, max_block_size = 1, max_execution_time = 30 FORMAT Null',
                ).catch(() => undefined),
              );
              await new Promise((r) => setTimeout(r, 1000));
            }
          })();
          replacedShare = await waitUntil(
            "parts a swap replaced holding most of a table's rows on node 3's disk",
            async () => {
              const share = await replacedShareOnNode3();
              return share > DEFAULT_WRONG_PARTS_RATIO ? share : undefined;
            },
            { timeoutMs: 90_000, retryErrors: true },
          );
          // The worst moment: right after the ingest's offsets of shard 02 moved on (a batch stored and
          // acknowledged), before node 4 may have fetched its part, node 3 dies.
          const before = sum(await committedOffsets());
          const deadline = Date.now() + 30_000;
          while (sum(await committedOffsets()) === before && Date.now() < deadline) {
            // Polled as fast as Kafka answers: the kill must land within the fetch's delay.
          }
          stack.kill('clickhouse3');
          killedAt = Date.now();
          reading = false;
          await reader;
          await Promise.all(reads);
          atKill = Number((await sqlOn(4, 'SELECT count() FROM events_raw'))[0]);
        })();
      }
    });
    await fault;
    // The shard's inserts are refused and tried again, visibly: once node 3's ZooKeeper session is
    // over (10 s), node 4 alone is less than the quorum, and says so.
    await waitUntil(
      'the ingest retrying inserts refused for want of a quorum',
      async () =>
        (await ingest.metric('adx_ingest_retries_total')) > retriesBefore &&
        ingest.log.some((l) => /not stored.*alive replicas/.test(l)),
      { timeoutMs: 90_000, retryErrors: true },
    );
    // What the ingest acknowledged: the Kafka offsets its group committed, shard 02's sources.
    const committed = await committedOffsets();
    const survivor = new Set(await sqlOn(4, 'SELECT DISTINCT event_id FROM events_raw'));
    // Reports answer meanwhile, through the store (Distributed tables, node 4 for shard 02).
    const during = await byCampaign();
    expect(Object.keys(during).length).toBeGreaterThan(0);
    const refusals = refusalsOf(ingest.log);

    // Node 3 back (once its killed process is gone): the inserts go through again.
    await waitUntil('node 3 gone', () => !processAlive(pidOf(stack, 'clickhouse3')), { timeoutMs: 30_000 });
    // What its start will find on disk that ZooKeeper does not list for it (none of it acknowledged
    // to the ingest): the parts a seal's swap replaced, a merge's sources ZooKeeper already forgot,
    // an INSERT's part not committed.
    const unexpected = await unexpectedParts();
    console.log(
      `replica-insert-faults: killed with ${(replacedShare * 100).toFixed(0)} % of a table's rows in parts a swap replaced; ` +
        `${diskParts} parts on node 3's disk that ZooKeeper lists for it, ${describeParts(unexpected)} it does not; ` +
        `written: ${
          unexpected
            .filter((p) => p.why === 'written')
            .map((p) => `${p.table}/${p.name}`)
            .join(' ') || 'none'
        }`,
    );
    const restartAt = Date.now();
    try {
      stack.up('clickhouse3');
    } catch (error) {
      // Once a restarted node 3 did not answer within the script's 120 s: keep what it said.
      console.log(
        ['node 3 did not start; its error log (last 40 lines):', ...logOf(3).slice(-40)].join('\n'),
      );
      throw error;
    }
    const all = await waitUntil(
      'every event readable through the Distributed tables',
      async () => {
        // This case's ids only: counted with the first case's, the wait once ended 3 events early.
        const [n] = await sql("SELECT uniqExact(event_id) FROM events_raw WHERE event_id NOT LIKE 'q-%'");
        return Number(n) >= events.length ? Date.now() : undefined;
      },
      { timeoutMs: 180_000, retryErrors: true },
    );
    const alreadyActive = logOf(3).filter((l) => /appears to be already active/.test(l)).length;
    // Each such part detached at the start (`ignored_` in the table's detached/), none loaded: loaded,
    // a part only node 3 has would count its rows a second time when the ingest stores them again.
    const detached = logOf(3)
      .map((l) =>
        /\.(\w+) \(StorageReplicatedMergeTree\): Renaming unexpected part (\S+) to ignored_/.exec(l),
      )
      .filter((m) => m !== null)
      .map((m) => `${m[1]}/${m[2]}`);

    // Every row the ingest acknowledged (its offset committed) before the check was on node 4 while
    // node 3 was down: one row's offset column is its frame's offset, or that + 1 for a frame's last
    // event, so `offset < committed` is a subset of the acknowledged rows.
    const acknowledged: string[] = [];
    for (const [source, offset] of committed) {
      acknowledged.push(
        ...(await sqlOn(
          4,
          `SELECT DISTINCT event_id FROM events_raw WHERE source = '${source}' AND \`offset\` < ${offset}`,
        )),
      );
    }
    const missing = acknowledged.filter((e) => !survivor.has(e));
    console.log(
      `replica-insert-faults: node 3 killed with ${atKill} rows on node 4, ${((restartAt - killedAt) / 1000).toFixed(1)} s down; ` +
        `${acknowledged.length} acknowledged rows of shard 02, ${missing.length} missing on node 4 meanwhile; ` +
        `refusals logged ${JSON.stringify(refusals)}; every event readable ${((all - restartAt) / 1000).toFixed(1)} s after the restart ` +
        `("already active" ${alreadyActive} times); ${detached.length} parts detached at its start; ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    // The kill found what it waited for (parts a swap replaced, on node 3's disk), and the start
    // detached exactly what ZooKeeper did not list.
    expect(unexpected.filter((p) => p.why === 'swapped').length).toBeGreaterThan(0);
    expect(detached.sort()).toEqual(unexpected.map((p) => `${p.table}/${p.name}`).sort());
    // Node 3 caught up (FINAL below reads each shard's first replica).
    await inSync();
    await expectStoredOnce(events);
    // Node 3 holds what node 4 does, part for part, and nothing else; it answers the reports itself.
    await waitUntil(
      'node 3 with the same parts as node 4',
      async () => {
        const [three, four] = await Promise.all([3, 4].map((node) => activeParts(node as Node)));
        return deepEqual(three, four);
      },
      { timeoutMs: 60_000, retryErrors: true },
    ).catch(async () => expect(await activeParts(3)).toEqual(await activeParts(4)));
    const throughNode3 = stack.store(database, { url: stack.clickhouseUrl(3) });
    try {
      expect(await exactByCampaign(throughNode3, RANGE)).toEqual(
        Object.fromEntries(expectedBySplit(publishedSoFar, 'campaign_id')),
      );
    } finally {
      await throughNode3.close();
    }
    expect(ingest.exited).toBe(false);
  });

  it('a ZooKeeper restart while the ingest inserts: inserts refused and retried, the tables writable again within a bound, nothing lost or doubled', async () => {
    const started = Date.now();
    // Other ids than the first test's events, on the same days.
    const events = demoEvents(3, 1000).map((e) => ({ ...e, event_id: `zk-${e.event_id}` }));
    diagnoseOnFailure();
    await inSync();
    const retriesBefore = await ingest.metric('adx_ingest_retries_total');
    const logFrom = ingest.log.length;
    let stoppedAt = 0;
    await publishPaced(`rif-z-${id}`, events, async (published) => {
      if (stoppedAt === 0 && published >= events.length / 3) {
        await waitUntil(
          'the ingest storing',
          async () => Number((await sql("SELECT count() FROM events_raw WHERE event_id LIKE 'zk-%'"))[0]) > 0,
          { timeoutMs: 60_000, retryErrors: true },
        );
        stack.down('zookeeper');
        stoppedAt = Date.now();
      }
    });
    await waitUntil(
      'the ingest retrying refused inserts',
      async () => {
        const retries = await ingest.metric('adx_ingest_retries_total');
        return retries > retriesBefore && ingest.log.some((l) => /readonly mode/i.test(l));
      },
      { timeoutMs: 60_000, retryErrors: true },
    );
    // Reports answer without ZooKeeper (reads need none).
    expect(Object.keys(await byCampaign()).length).toBeGreaterThan(0);
    // Down past ClickHouse's ZooKeeper session (10 s): the servers open new sessions.
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + 12_000 - Date.now())));
    stack.up('zookeeper');
    const back = Date.now();
    const writable = await waitUntil(
      'every replicated table writable again',
      async () => {
        for (const node of [1, 2, 3, 4] as const) {
          const [readonly] = await sqlOn(
            node,
            `SELECT count() FROM system.replicas WHERE database = '${database}' AND is_readonly`,
          );
          if (readonly !== '0') {
            return undefined;
          }
        }
        return Date.now();
      },
      { timeoutMs: 180_000, retryErrors: true },
    );
    const all = await waitUntil(
      'every event readable',
      async () => {
        const [n] = await sql("SELECT uniqExact(event_id) FROM events_raw WHERE event_id LIKE 'zk-%'");
        return Number(n) >= events.length ? Date.now() : undefined;
      },
      { timeoutMs: 180_000, retryErrors: true },
    );
    const refusals = refusalsOf(ingest.log.slice(logFrom));
    console.log(
      `replica-insert-faults: refusals logged ${JSON.stringify(refusals)}; ZooKeeper down ${((back - stoppedAt) / 1000).toFixed(1)} s; tables writable ` +
        `${((writable - back) / 1000).toFixed(1)} s and every event readable ${((all - back) / 1000).toFixed(1)} s after it answered; ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    expect(writable - back).toBeLessThan(WRITABLE_AFTER_ZOOKEEPER_MS);
    await expectStoredOnce(events);
    expect(ingest.exited).toBe(false);
  });

  /**
   * Publishes `events` through the event bus, as the apps configure it, 50 at a time every 100 ms
   * (so that the ingest inserts all along), `afterChunk` after each; then waits for the bus's spool.
   */
  async function publishPaced(
    clientId: string,
    events: readonly AdEvent[],
    afterChunk: (published: number) => Promise<void>,
  ): Promise<void> {
    const bus = eventBusFrom(
      loadConfig(BaseSettings, {
        ...kafkaEnv,
        KAFKA_CLIENT_ID: clientId,
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-rif-spool-')),
      }),
    );
    try {
      for (let from = 0; from < events.length; from += 50) {
        await publishEvents(bus, events.slice(from, from + 50));
        await afterChunk(Math.min(from + 50, events.length));
        await new Promise((r) => setTimeout(r, 100));
      }
      await bus.drain();
    } finally {
      await bus.close();
    }
    publishedSoFar.push(...events);
  }

  /** Every id published stored, one row each once deduplicated, the closed days' reports the hand count. */
  async function expectStoredOnce(events: readonly AdEvent[]): Promise<void> {
    const ids = new Set(events.map((e) => e.event_id));
    const stored = (await sql('SELECT DISTINCT event_id FROM events_raw')).filter((e) => ids.has(e));
    expect(stored.length).toBe(ids.size);
    // Nothing foreign: the ids stored are those of every test so far.
    const everything = new Set(publishedSoFar.map((e) => e.event_id));
    expect((await sql('SELECT DISTINCT event_id FROM events_raw')).every((e) => everything.has(e))).toBe(
      true,
    );
    // One row per event once deduplicated (FINAL on each shard's local table).
    const perShard = await Promise.all(
      ([1, 3] as const).map((node) => sqlOn(node, 'SELECT count() FROM events_raw FINAL')),
    );
    expect(perShard.reduce((sum, [n]) => sum + Number(n), 0)).toBe(publishedSoFar.length);
    await expectSealedToHandCount(store, RANGE, publishedSoFar, 120_000);
  }

  /** The Kafka offsets the ingest's group committed, by source (`topic/partition`), for shard 02's partitions. */
  async function committedOffsets(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const topic of EVENT_TOPICS.map((t) => `${prefix}${t}`)) {
      const [{ partitions }] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      for (const { partition, offset } of partitions) {
        if (partition % 2 === 1 && Number(offset) > 0) {
          out.set(`${topic}/${partition}`, Number(offset));
        }
      }
    }
    return out;
  }

  /** Every node up, every replicated table writable and its queue empty. */
  async function inSync(): Promise<void> {
    await waitUntil(
      'every replica in sync',
      async () => {
        for (const node of [1, 2, 3, 4] as const) {
          const [busy] = await sqlOn(
            node,
            `SELECT count() FROM system.replicas WHERE database = '${database}' AND (is_readonly OR queue_size > 0)`,
          );
          if (busy !== '0') {
            return false;
          }
        }
        return true;
      },
      { timeoutMs: 120_000, retryErrors: true },
    );
  }

  /**
   * Node 3's parts (read on its disk while it is down) of each replicated table that ZooKeeper does
   * not list for it: what its start calls unexpected, each with what made it: `swapped` if a seal's
   * swap (`REPLACE PARTITION`, its drop range in the table's replication log) replaced it, `merged`
   * if a part ZooKeeper lists covers it, else `written` (an INSERT's or merge's part not committed).
   */
  async function unexpectedParts(): Promise<UnexpectedPart[]> {
    // Node 4's replicas of the same tables name each table's path in ZooKeeper (a table renamed by a
    // migration keeps the path it was made with).
    const tables = await sqlOn(
      4,
      `SELECT table, zookeeper_path FROM system.replicas WHERE database = '${database}' FORMAT TSV`,
    );
    const out: UnexpectedPart[] = [];
    for (const [table, zookeeperPath] of tables.map((line) => line.split('\t'))) {
      const listed = new Set(
        await sqlOn(
          4,
          `SELECT name FROM system.zookeeper WHERE path = '${zookeeperPath}/replicas/node3/parts'`,
        ),
      );
      const dropRanges = (
        await sqlOn(
          4,
          `SELECT extract(value, 'drop_range_name: ([^\\n]+)') AS r FROM system.zookeeper WHERE path = '${zookeeperPath}/log' AND r != ''`,
        )
      )
        .map(partInfo)
        .filter((p) => p !== undefined);
      const dir = path.join(stack.dir, 'cluster', 'clickhouse3', 'data', 'data', database, table);
      const onDisk = readdirSync(dir)
        .map(partInfo)
        .filter((p) => p !== undefined);
      const kept = onDisk.filter((p) => listed.has(p.name));
      diskParts += kept.length;
      for (const part of onDisk.filter((p) => !listed.has(p.name))) {
        const why = dropRanges.some((r) => covers(r, part))
          ? 'swapped'
          : kept.some((k) => covers(k, part))
            ? 'merged'
            : 'written';
        out.push({ table, ...part, why });
      }
    }
    return out;
  }

  /**
   * The largest share, over node 3's replicated tables, of a table's rows on disk held by parts that
   * ZooKeeper no longer lists for node 3 (inactive: a swap replaced them), as 18.16 weighs them at start.
   */
  async function replacedShareOnNode3(): Promise<number> {
    const tables = await sqlOn(
      3,
      `SELECT table, zookeeper_path FROM system.replicas WHERE database = '${database}' FORMAT TSV`,
    );
    let most = 0;
    for (const [table, zookeeperPath] of tables.map((line) => line.split('\t'))) {
      const [share] = await sqlOn(
        3,
        `SELECT sumIf(rows, NOT active AND name NOT IN (SELECT name FROM system.zookeeper WHERE path = '${zookeeperPath}/replicas/node3/parts')) / sum(rows) ` +
          `FROM system.parts WHERE database = '${database}' AND table = '${table}'`,
      );
      most = Math.max(most, Number(share) || 0);
    }
    return most;
  }

  /** A node's active parts of the replicated tables, `table/part`. */
  const activeParts = (node: Node) =>
    sqlOn(
      node,
      `SELECT concat(table, '/', name) FROM system.parts WHERE database = '${database}' AND active AND engine LIKE 'Replicated%' ORDER BY table, name`,
    );

  function logOf(node: Node): string[] {
    try {
      return readFileSync(
        path.join(stack.dir, 'cluster', `clickhouse${node}`, 'log', 'clickhouse.err.log'),
        'utf8',
      ).split('\n');
    } catch {
      return [];
    }
  }

  const byCampaign = () => exactByCampaign(store, RANGE);

  /** What a failure needs explained: the ingest's output, the replicas' state per node. */
  function diagnoseOnFailure(): void {
    onTestFailed(async () => {
      const nodes = await Promise.all(
        ([1, 2, 3, 4] as const).map((node) =>
          sqlOn(
            node,
            `SELECT count(), uniqExact(event_id), (SELECT groupArray((table, is_readonly, queue_size, absolute_delay)) FROM system.replicas WHERE database = '${database}') FROM events_raw`,
          ).then(
            ([line]) => `node ${node}: ${line}`,
            (error: Error) => `node ${node}: ${error.message.slice(0, 160)}`,
          ),
        ),
      );
      console.log(
        [
          `ingest exited: ${ingest.exited}, health ${await ingest.health()}`,
          `raw rows, ids and replicas per node: ${nodes.join(' | ')}`,
          'ingest log (last 30 lines):',
          ...ingest.log.slice(-30),
        ].join('\n'),
      );
    });
  }
});

/** The ingest's refused inserts by the reason ClickHouse gave (its message up to the first comma). */
function refusalsOf(log: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of log) {
    const reason =
      /not stored \(try \d+\).*?: ingest from [^:]+: (?:Code: \d+, e\.displayText\(\) = DB::Exception: )?([^,."]+)/.exec(
        line,
      )?.[1];
    if (reason !== undefined) {
      out[reason] = (out[reason] ?? 0) + 1;
    }
  }
  return out;
}

interface PartInfo {
  name: string;
  partition: string;
  min: number;
  max: number;
  level: number;
}
type UnexpectedPart = PartInfo & { table: string; why: 'swapped' | 'merged' | 'written' };

/** A part's folder name read (`<partition>_<min block>_<max block>_<level>[_<mutation>]`), or undefined for another folder. */
function partInfo(name: string): PartInfo | undefined {
  const m = /^([^_]+)_(\d+)_(\d+)_(\d+)(?:_\d+)?$/.exec(name);
  return m === null
    ? undefined
    : { name, partition: m[1], min: Number(m[2]), max: Number(m[3]), level: Number(m[4]) };
}

function covers(outer: PartInfo, inner: PartInfo): boolean {
  return (
    outer.partition === inner.partition &&
    outer.min <= inner.min &&
    outer.max >= inner.max &&
    outer.level >= inner.level &&
    outer.name !== inner.name
  );
}

/** How many parts, by what made them and by table. */
function describeParts(parts: readonly UnexpectedPart[]): string {
  return (
    `${parts.length} ${JSON.stringify(countBy(parts.map((p) => p.why)))} ` +
    `by table ${JSON.stringify(countBy(parts.map((p) => p.table)))}`
  );
}

function countBy(keys: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of keys) {
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

function sum(offsets: ReadonlyMap<string, number>): number {
  return [...offsets.values()].reduce((a, b) => a + b, 0);
}

/** The pid of a ClickHouse node's server, from its pid file. */
function pidOf(stack: ClusterStack, node: 'clickhouse3' | 'clickhouse4'): number {
  return Number(readFileSync(path.join(stack.dir, 'cluster', node, 'clickhouse.pid'), 'utf8').trim());
}

/** Whether a process still runs (one killed with SIGKILL stays a zombie a while). */
function processAlive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
