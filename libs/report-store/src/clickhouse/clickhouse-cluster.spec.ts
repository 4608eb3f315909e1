import { describe, expect, it } from 'vitest';
import { readMigrations } from './clickhouse-migrator';
import {
  parseShards,
  quorumSettings,
  replicatedStatement,
  runsOnEveryReplica,
  shardOfSource,
  unreplicatedEngine,
} from './clickhouse-cluster';

describe('ClickHouse cluster helpers', () => {
  it('routes a Kafka partition, and every run of the in-process bus on it, to partition mod shards', () => {
    expect([0, 1, 2, 3, 4, 5].map((p) => shardOfSource(`adx.impression/${p}`, 2))).toEqual([
      0, 1, 0, 1, 0, 1,
    ]);
    expect(shardOfSource('adx.click/3/run-a', 2)).toBe(shardOfSource('adx.click/3/run-b', 2));
    expect(shardOfSource('adx.click/7', 3)).toBe(1);
    // Another shape goes by a stable hash of its text.
    expect(shardOfSource('elsewhere', 2)).toBe(shardOfSource('elsewhere', 2));
    expect(new Set(['a', 'b', 'c', 'd', 'e', 'f'].map((s) => shardOfSource(s, 2)))).toEqual(new Set([0, 1]));
  });

  it("asks every replica of a shard for an INSERT's quorum unless told fewer, and refuses more than a shard has", () => {
    expect(quorumSettings(2, undefined, 30_000)).toEqual({
      insert_quorum: '2',
      insert_quorum_timeout: 15_000,
    });
    expect(quorumSettings(3, 2, 30_000)).toEqual({ insert_quorum: '2', insert_quorum_timeout: 15_000 });
    // A quorum of one is no quorum: the replica written to answers alone.
    expect(quorumSettings(2, 1, 30_000)).toBeUndefined();
    expect(quorumSettings(1, undefined, 30_000)).toBeUndefined();
    expect(() => quorumSettings(2, 3, 30_000)).toThrow(/needs that many replicas/);
  });

  it('reads CLICKHOUSE_SHARDS and refuses a shard without replicas or a URL that is not http(s)', () => {
    expect(parseShards('http://a:1,http://b:2;http://c:3')).toEqual([
      ['http://a:1', 'http://b:2'],
      ['http://c:3'],
    ]);
    expect(() => parseShards('http://a:1;;http://c:3')).toThrow(/at least one replica/);
    expect(() => parseShards('ftp://a')).toThrow(/not an http/);
  });

  it('turns each MergeTree engine of a CREATE TABLE into its Replicated variant, keeping its arguments', () => {
    expect(
      replicatedStatement('CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = MergeTree ORDER BY a', 'adx'),
    ).toBe(
      "CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/adx/t', '{replica}') ORDER BY a",
    );
    expect(
      replicatedStatement('CREATE TABLE o (a UInt8) ENGINE = ReplacingMergeTree(a) ORDER BY a', 'd'),
    ).toBe(
      "CREATE TABLE o (a UInt8) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/d/o', '{replica}', a) ORDER BY a",
    );
    expect(
      replicatedStatement('CREATE TABLE s AS t ENGINE = SummingMergeTree PARTITION BY a ORDER BY a', 'd'),
    ).toBe(
      "CREATE TABLE s AS t ENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/d/s', '{replica}') PARTITION BY a ORDER BY a",
    );
    const view = 'CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS SELECT a FROM s';
    expect(replicatedStatement(view, 'd')).toBe(view);
    expect(() => replicatedStatement('CREATE TABLE s AS t', 'd')).toThrow(/names no engine/);
  });

  it('makes every table of the released migrations replicated, and runs only INSERT and ALTER on one replica', () => {
    const creates = readMigrations('clickhouse')
      .flatMap((m) => m.statements)
      .filter((s) => /^CREATE TABLE/i.test(s));
    expect(creates.length).toBeGreaterThan(8);
    for (const statement of creates) {
      expect(replicatedStatement(statement, 'adx')).toMatch(
        /ENGINE = Replicated\w*MergeTree\('\/clickhouse\/tables\/\{shard\}\/adx\//,
      );
    }
    expect(runsOnEveryReplica('INSERT INTO t SELECT 1')).toBe(false);
    expect(runsOnEveryReplica('ALTER TABLE t ADD COLUMN c UInt8')).toBe(false);
    expect(runsOnEveryReplica('RENAME TABLE a TO b')).toBe(true);
  });

  it('gives a staging table its table engine without replication', () => {
    expect(
      unreplicatedEngine(
        "ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/adx/exact_daily_by_day', '{replica}') PARTITION BY day ORDER BY (day, k) SETTINGS index_granularity = 8192",
      ),
    ).toBe('SummingMergeTree PARTITION BY day ORDER BY (day, k) SETTINGS index_granularity = 8192');
    expect(unreplicatedEngine("ReplicatedReplacingMergeTree('/p', 'r', last_offset) ORDER BY source")).toBe(
      'ReplacingMergeTree(last_offset) ORDER BY source',
    );
    expect(unreplicatedEngine('MergeTree ORDER BY a')).toBeUndefined();
  });
});
