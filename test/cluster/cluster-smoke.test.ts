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
 * them back from any node. That no acknowledged event is lost when a broker is killed is shown with
 * the product's own producer, ingest and store in kafka-faults.test.ts.
 */
const available = requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java');
const sqlOn = (stack: ClusterStack, node: (typeof CLUSTER_CLICKHOUSE_NODES)[number]) =>
  clickHouseSql(() => stack.clickhouseUrl(node));

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
});
