import { describe, expect, it } from 'vitest';
import { ConfigException, loadConfig } from './config.loader';
import { BaseSettings, StoreSettings } from './shared-settings';

describe('StoreSettings: DUCKDB_MEMORY_LIMIT', () => {
  it('defaults to a limit, and an empty value keeps it', () => {
    expect(loadConfig(StoreSettings, {}).DUCKDB_MEMORY_LIMIT).toBe('64MB');
    expect(loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: '' }).DUCKDB_MEMORY_LIMIT).toBe('64MB');
  });

  it.each(['0', '64MB', '1GB', '1.5GB', '512MiB', '2 GiB', '300mb', '0.5GB'])('takes %s', (value) => {
    expect(loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: value }).DUCKDB_MEMORY_LIMIT).toBe(value);
  });

  it.each(['256', 'lots', '-1GB', '0MB', '1 PB', '80%', '1GB; SET threads=1'])('refuses %s', (value) => {
    expect(() => loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: value })).toThrow(ConfigException);
  });
});

describe('BaseSettings: the Kafka client', () => {
  it('defaults to gzip, 4 producers, 2 partitions at once and 4 MiB per partition', () => {
    const settings = loadConfig(BaseSettings, {});
    expect(settings.KAFKA_COMPRESSION).toBe('gzip');
    expect(settings.KAFKA_PRODUCERS).toBe(4);
    expect(settings.KAFKA_CONCURRENT_PARTITIONS).toBe(2);
    expect(settings.KAFKA_MAX_BYTES_PER_PARTITION).toBe(4 * 1024 * 1024);
  });

  it('takes none, and numbers within bounds', () => {
    const settings = loadConfig(BaseSettings, {
      KAFKA_COMPRESSION: 'none',
      KAFKA_PRODUCERS: '1',
      KAFKA_CONCURRENT_PARTITIONS: '4',
      KAFKA_MAX_BYTES_PER_PARTITION: '1048576',
    });
    expect(settings.KAFKA_COMPRESSION).toBe('none');
    expect(settings.KAFKA_PRODUCERS).toBe(1);
    expect(settings.KAFKA_CONCURRENT_PARTITIONS).toBe(4);
    expect(settings.KAFKA_MAX_BYTES_PER_PARTITION).toBe(1048576);
  });

  it.each([
    { KAFKA_COMPRESSION: 'snappy' },
    { KAFKA_PRODUCERS: '0' },
    { KAFKA_PRODUCERS: '2.5' },
    { KAFKA_CONCURRENT_PARTITIONS: '0' },
    { KAFKA_MAX_BYTES_PER_PARTITION: '1024' },
  ])('refuses %o', (env) => {
    expect(() => loadConfig(BaseSettings, env)).toThrow(ConfigException);
  });
});

describe("BaseSettings: the topics' replication", () => {
  it('defaults to one copy on one broker, min.insync.replicas left to the bus (one less, at least 1)', () => {
    const settings = loadConfig(BaseSettings, {});
    expect(settings.KAFKA_REPLICATION_FACTOR).toBe(1);
    expect(settings.KAFKA_MIN_INSYNC_REPLICAS).toBeUndefined();
  });

  it("takes the cluster's 3 and 2", () => {
    const settings = loadConfig(BaseSettings, {
      KAFKA_REPLICATION_FACTOR: '3',
      KAFKA_MIN_INSYNC_REPLICAS: '2',
    });
    expect(settings.KAFKA_REPLICATION_FACTOR).toBe(3);
    expect(settings.KAFKA_MIN_INSYNC_REPLICAS).toBe(2);
  });

  it.each([
    [{ KAFKA_REPLICATION_FACTOR: '0' }, 'KAFKA_REPLICATION_FACTOR'],
    [{ KAFKA_REPLICATION_FACTOR: 'three' }, 'KAFKA_REPLICATION_FACTOR'],
    [{ KAFKA_MIN_INSYNC_REPLICAS: '0' }, 'KAFKA_MIN_INSYNC_REPLICAS'],
    [{ KAFKA_MIN_INSYNC_REPLICAS: 'two' }, 'KAFKA_MIN_INSYNC_REPLICAS'],
    [{ KAFKA_MIN_INSYNC_REPLICAS: '1.5', KAFKA_REPLICATION_FACTOR: '3' }, 'KAFKA_MIN_INSYNC_REPLICAS'],
    [{ KAFKA_MIN_INSYNC_REPLICAS: '2' }, 'at most KAFKA_REPLICATION_FACTOR (1)'],
    [
      { KAFKA_MIN_INSYNC_REPLICAS: '4', KAFKA_REPLICATION_FACTOR: '3' },
      'at most KAFKA_REPLICATION_FACTOR (3)',
    ],
  ])('refuses %o, naming it', (env, named) => {
    expect(() => loadConfig(BaseSettings, env)).toThrow(named);
  });
});

describe('StoreSettings: a ClickHouse cluster', () => {
  const shards =
    'http://127.0.0.1:28121,http://127.0.0.1:28122;http://127.0.0.1:28123,http://127.0.0.1:28124';

  it('is off by default and takes a cluster name with its shards and the node reports read', () => {
    expect(loadConfig(StoreSettings, {}).CLICKHOUSE_CLUSTER).toBeUndefined();
    const settings = loadConfig(StoreSettings, {
      CLICKHOUSE_CLUSTER: 'adx',
      CLICKHOUSE_SHARDS: shards,
      CLICKHOUSE_URL: 'http://127.0.0.1:28121',
    });
    expect([settings.CLICKHOUSE_CLUSTER, settings.CLICKHOUSE_SHARDS]).toEqual(['adx', shards]);
  });

  it.each([
    [
      { CLICKHOUSE_CLUSTER: 'adx', CLICKHOUSE_URL: 'http://127.0.0.1:28121' },
      'CLICKHOUSE_CLUSTER needs CLICKHOUSE_SHARDS',
    ],
    [{ CLICKHOUSE_CLUSTER: 'adx', CLICKHOUSE_SHARDS: shards }, 'CLICKHOUSE_CLUSTER needs CLICKHOUSE_SHARDS'],
    [
      { CLICKHOUSE_CLUSTER: 'a-b', CLICKHOUSE_SHARDS: shards, CLICKHOUSE_URL: 'http://x' },
      'CLICKHOUSE_CLUSTER must be',
    ],
    [{ CLICKHOUSE_SHARDS: 'http://a;;http://b' }, 'CLICKHOUSE_SHARDS must be'],
    [{ CLICKHOUSE_SHARDS: 'tcp://a:9000' }, 'CLICKHOUSE_SHARDS must be'],
  ])('refuses %o, naming it', (env, named) => {
    expect(() => loadConfig(StoreSettings, env)).toThrow(named);
  });
});
