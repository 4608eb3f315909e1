import { Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLUSTER_CLICKHOUSE_NODES,
  CLUSTER_NAME,
  ClusterStack,
  clickHouseSql,
  requireOrSkip,
  stackServersInstalled,
} from '@app/testing';

/**
 * The cluster topology of `npm run stack:up -- --cluster` (stack/cluster-up.sh), started privately
 * (`ClusterStack`: its own folder, ports from PRIVATE_CLUSTER_* or free ones): ZooKeeper, ClickHouse
 * as 2 shards x 2 replicas, three KRaft brokers. It shows that the topology is what the product's
 * cluster work relies on: DDL ON CLUSTER reaches the four nodes, a ReplicatedMergeTree part written
 * on one replica appears on the other, a Distributed table spreads rows over both shards and reads
 * them back from any node, and a topic of replication factor 3 with min.insync.replicas 2 loses no
 * message acknowledged by all in-sync replicas when one broker is killed with SIGKILL.
 */
const available = requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java');
const sqlOn = (stack: ClusterStack, node: (typeof CLUSTER_CLICKHOUSE_NODES)[number]) =>
  clickHouseSql(() => stack.clickhouseUrl(node));

async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.runIf(available)('cluster topology (2 x 2 ClickHouse, 3 Kafka brokers, ZooKeeper)', () => {
  let stack: ClusterStack;
  const db = `adx_cluster_${process.pid}`;

  beforeAll(async () => {
    stack = await ClusterStack.create('smoke');
    stack.up();
  });

  afterAll(() => {
    stack?.destroy();
  });

  it('declares cluster adx as two shards of two replicas, each node with its own macros', async () => {
    for (const node of CLUSTER_CLICKHOUSE_NODES) {
      const sql = sqlOn(stack, node);
      const layout = await sql(
        `SELECT shard_num, replica_num, port FROM system.clusters WHERE cluster = '${CLUSTER_NAME}' ORDER BY shard_num, replica_num`,
      );
      expect(layout).toEqual([
        `1\t1\t${stack.ports.CLUSTER_CH1_TCP_PORT}`,
        `1\t2\t${stack.ports.CLUSTER_CH2_TCP_PORT}`,
        `2\t1\t${stack.ports.CLUSTER_CH3_TCP_PORT}`,
        `2\t2\t${stack.ports.CLUSTER_CH4_TCP_PORT}`,
      ]);
      const macros = await sql(`SELECT macro, substitution FROM system.macros ORDER BY macro`);
      expect(macros).toEqual([
        `cluster\t${CLUSTER_NAME}`,
        `replica\tnode${node}`,
        `shard\t${ClusterStack.shardOf(node)}`,
      ]);
    }
  });

  it('replicates a ReplicatedMergeTree table made ON CLUSTER and reads both shards through a Distributed table', async () => {
    const first = sqlOn(stack, 1);
    // ON CLUSTER returns once every node has run the statement (or fails naming the one that did not).
    await first(`CREATE DATABASE IF NOT EXISTS ${db} ON CLUSTER ${CLUSTER_NAME}`);
    await first(
      `CREATE TABLE ${db}.events_local ON CLUSTER ${CLUSTER_NAME} (event_id String, n UInt64) ` +
        `ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/events_local', '{replica}') ORDER BY event_id`,
    );
    await first(
      `CREATE TABLE ${db}.events ON CLUSTER ${CLUSTER_NAME} AS ${db}.events_local ` +
        `ENGINE = Distributed(${CLUSTER_NAME}, ${db}, events_local, cityHash64(event_id))`,
    );

    // A part written on one replica only is fetched by the other through ZooKeeper's log.
    await sqlOn(
      stack,
      3,
    )(`INSERT INTO ${db}.events_local SELECT concat('direct-', toString(number)), number FROM numbers(100)`);
    await sqlOn(stack, 4)(`SYSTEM SYNC REPLICA ${db}.events_local`);
    expect(await sqlOn(stack, 4)(`SELECT count(), sum(n) FROM ${db}.events_local`)).toEqual(['100\t4950']);
    expect(await sqlOn(stack, 1)(`SELECT count() FROM ${db}.events_local`)).toEqual(['0']);

    // Through the Distributed table: each row goes to the shard its key's hash picks, synchronously.
    const rows = 1000;
    await fetch(`${stack.clickhouseUrl(2)}/?insert_distributed_sync=1`, {
      method: 'POST',
      body: `INSERT INTO ${db}.events SELECT concat('event-', toString(number)), number FROM numbers(${rows})`,
    }).then(async (r) => expect(r.ok, await r.text()).toBe(true));
    for (const node of CLUSTER_CLICKHOUSE_NODES) {
      await sqlOn(stack, node)(`SYSTEM SYNC REPLICA ${db}.events_local`);
    }
    const perNode = await Promise.all(
      CLUSTER_CLICKHOUSE_NODES.map(
        async (node) =>
          (
            await sqlOn(
              stack,
              node,
            )(`SELECT count(), sum(n) FROM ${db}.events_local WHERE event_id LIKE 'event-%'`)
          )[0],
      ),
    );
    // Replicas of one shard hold the same rows; the two shards split the rows between them.
    expect(perNode[0]).toBe(perNode[1]);
    expect(perNode[2]).toBe(perNode[3]);
    const [count1, sum1] = perNode[0].split('\t').map(Number);
    const [count2, sum2] = perNode[2].split('\t').map(Number);
    expect(count1).toBeGreaterThan(0);
    expect(count2).toBeGreaterThan(0);
    expect(count1 + count2).toBe(rows);
    expect(sum1 + sum2).toBe((rows * (rows - 1)) / 2);
    // Each shard holds exactly the keys the sharding expression sends it (shard index = hash % 2).
    for (const [node, index] of [
      [1, 0],
      [3, 1],
    ] as const) {
      expect(
        await sqlOn(
          stack,
          node,
        )(
          `SELECT countIf(cityHash64(event_id) % 2 != ${index}) FROM ${db}.events_local WHERE event_id LIKE 'event-%'`,
        ),
      ).toEqual(['0']);
    }
    // Any node reads all of it through the Distributed table (the 100 direct rows included).
    for (const node of CLUSTER_CLICKHOUSE_NODES) {
      expect(await sqlOn(stack, node)(`SELECT count(), sum(n) FROM ${db}.events`)).toEqual([
        `${rows + 100}\t${(rows * (rows - 1)) / 2 + 4950}`,
      ]);
    }
  });

  it('keeps every message acknowledged by all in-sync replicas when one broker of three is killed', async () => {
    const kafka = new Kafka({
      clientId: 'cluster-smoke',
      brokers: stack.kafkaBrokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 20, initialRetryTime: 200, maxRetryTime: 2000 },
    });
    const topic = `cluster_smoke_${process.pid}`;
    const admin: Admin = kafka.admin();
    const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const consumer: Consumer = kafka.consumer({
      groupId: `cluster-smoke-${process.pid}`,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    const seen = new Map<string, number>();
    try {
      await admin.connect();
      // The broker defaults (stack/kafka-cluster.properties) give the topic RF 3 and min ISR 2.
      // A broker's port answers before it has joined the quorum: wait for all three first.
      await until(
        async () => ((await admin.describeCluster()).brokers.length === 3 ? true : undefined),
        60_000,
        'three brokers registered',
      );
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: false });
      const layout = await until(
        async () => {
          const now = await admin.fetchTopicMetadata({ topics: [topic] });
          const ready =
            now.topics[0].partitions.length === 3 && now.topics[0].partitions.every((p) => p.leader >= 0);
          return ready ? now : undefined;
        },
        60_000,
        'leaders of the topic',
      );
      for (const partition of layout.topics[0].partitions) {
        expect(partition.replicas).toHaveLength(3);
        expect(partition.isr).toHaveLength(3);
      }
      // The topic's effective setting, from the brokers' own configuration (a broker answers
      // "unknown partition" until the new topic's metadata reached it).
      const minIsr = await until(
        async () =>
          (
            await admin.describeConfigs({
              resources: [{ type: 2, name: topic, configNames: ['min.insync.replicas'] }],
              includeSynonyms: false,
            })
          ).resources[0].configEntries[0].configValue,
        30_000,
        'the topic configuration',
      );
      expect(minIsr).toBe('2');

      await producer.connect();
      const acknowledged: string[] = [];
      const send = async (from: number, count: number) => {
        for (let batch = from; batch < from + count; batch += 50) {
          const messages = Array.from({ length: 50 }, (_, i) => ({
            key: `k${(batch + i) % 17}`,
            value: `m${batch + i}`,
          }));
          await producer.send({ topic, acks: -1, messages });
          acknowledged.push(...messages.map((m) => m.value));
        }
      };
      await send(0, 500);

      // Kill the leader of partition 0 the hard way, then write on: the other two take over.
      const leader = layout.topics[0].partitions.find((p) => p.partitionId === 0)!.leader as 1 | 2 | 3;
      stack.kill(`kafka${leader}`);
      await send(500, 500);
      await until(
        async () => {
          const now = await admin.fetchTopicMetadata({ topics: [topic] });
          return now.topics[0].partitions.every((p) => p.leader !== leader && p.isr.length === 2)
            ? true
            : undefined;
        },
        60_000,
        `the partitions to leave broker ${leader}`,
      );

      // With one broker down, the two left hold them all (a record counts once both in-sync
      // replicas have it), and possibly some twice: kafkajs's idempotent producer may write a
      // batch again across a leader change (seen here: 17 records more), which the consumers'
      // deduplication by event id absorbs (docs/distributed.md#the-cluster-topology).
      // A newly elected leader's high watermark may lag for a moment behind what it holds.
      const inLog = async () =>
        (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
      await until(async () => ((await inLog()) >= 1000 ? true : undefined), 30_000, 'the high watermarks');
      expect(await inLog()).toBeGreaterThanOrEqual(1000);

      // Back in: the killed broker catches up and rejoins every ISR (a restarted broker first cuts
      // its log back to what the leader holds: it cannot bring back a record the others lost).
      stack.up(`kafka${leader}`);
      await until(
        async () => {
          const now = await admin.fetchTopicMetadata({ topics: [topic] });
          return now.topics[0].partitions.every((p) => p.isr.length === 3) ? true : undefined;
        },
        90_000,
        `broker ${leader} to rejoin the in-sync replicas`,
      );
      // Read back by a group of its own from the start of the topic.
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const id = String(message.value);
          seen.set(id, (seen.get(id) ?? 0) + 1);
        },
      });
      await until(
        async () => (acknowledged.every((id) => seen.has(id)) ? true : undefined),
        90_000,
        'every acknowledged message',
      );
      expect(acknowledged).toHaveLength(1000);
      expect(seen.size).toBe(1000);
    } finally {
      await consumer.disconnect().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
    }
  });
});
