import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
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

  // Skipped until a replica restarted after kill -9 starts reliably: in 2 runs of 3 on 2026-11-27
  // ClickHouse 18.16 refused to attach a table at start ("The local set of parts ... doesn't look
  // like the set of parts in ZooKeeper", 11 unexpected parts) and exited. See docs/testing.md.
  it.skip("kill -9 of the replica the ingest writes shard 02 to: every committed row on the other replica, reports answer, inserts wait for the replica's return, nothing lost or doubled", async () => {
    const started = Date.now();
    const events = demoEvents(3, 1000);
    diagnoseOnFailure();
    const retriesBefore = await ingest.metric('adx_ingest_retries_total');
    let killedAt = 0;
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
          // The worst moment: right after the ingest's offsets of shard 02 moved on (a batch stored and
          // acknowledged), before node 4 may have fetched its part, node 3 dies.
          const before = sum(await committedOffsets());
          const deadline = Date.now() + 30_000;
          while (sum(await committedOffsets()) === before && Date.now() < deadline) {
            // Polled as fast as Kafka answers: the kill must land within the fetch's delay.
          }
          stack.kill('clickhouse3');
          killedAt = Date.now();
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
        const [n] = await sql('SELECT uniqExact(event_id) FROM events_raw');
        return Number(n) >= events.length ? Date.now() : undefined;
      },
      { timeoutMs: 180_000, retryErrors: true },
    );
    const alreadyActive = logOf(3).filter((l) => /appears to be already active/.test(l)).length;

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
        `("already active" ${alreadyActive} times); ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
    // Node 3 caught up (FINAL below reads each shard's first replica).
    await inSync();
    await expectStoredOnce(events);
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
    const truth = Object.fromEntries(expectedBySplit(publishedSoFar, 'campaign_id'));
    const report = await waitUntil(
      'the closed days sealed to the hand count',
      async () => {
        const now = await byCampaign();
        return deepEqual(now, truth) ? now : undefined;
      },
      { timeoutMs: 120_000, retryErrors: true },
    ).catch(byCampaign);
    expect(report).toEqual(truth);
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
