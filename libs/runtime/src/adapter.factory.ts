import { type Catalog, loadCatalog } from '@app/catalog';
import { InProcessEventBus, KafkaEventBus, type EventBus, type KafkaBusOptions } from '@app/events';
import { openReportStore, parseShards, type ReportStore } from '@app/report-store';
import { MemoryStateStore, RedisStateStore, type StateStore } from '@app/state-store';
import type { BaseSettings, StoreSettings } from '@app/config';

/**
 * The adapter of each port that the configuration names: the distributed one when its address is
 * set (CLICKHOUSE_URL, KAFKA_BROKERS, REDIS_URL), the embedded one otherwise.
 */
export function catalogFrom(settings: BaseSettings): Catalog {
  return loadCatalog(settings.CATALOG_PATH);
}

/**
 * `insertQuorum`: on a ClickHouse cluster, the replicas of a shard that must hold an INSERT before
 * it is acknowledged (the ingest's CLICKHOUSE_INSERT_QUORUM); every replica when unset.
 */
export function reportStoreFrom(
  settings: StoreSettings,
  queryTimeoutMs = 30_000,
  insertQuorum?: number,
): Promise<ReportStore> {
  if (settings.CLICKHOUSE_URL) {
    return openReportStore({
      kind: 'clickhouse',
      url: settings.CLICKHOUSE_URL,
      database: settings.CLICKHOUSE_DATABASE,
      username: settings.CLICKHOUSE_USER,
      password: settings.CLICKHOUSE_PASSWORD,
      migrationsDir: settings.CLICKHOUSE_MIGRATIONS_DIR,
      sampleDenominator: settings.INEXACT_SAMPLE_DENOMINATOR,
      queryTimeoutMs,
      rawRetentionMonths: settings.RAW_RETENTION_MONTHS,
      cluster: settings.CLICKHOUSE_CLUSTER
        ? { name: settings.CLICKHOUSE_CLUSTER, shards: parseShards(settings.CLICKHOUSE_SHARDS ?? '') }
        : undefined,
      insertQuorum,
    });
  }
  return openReportStore({
    kind: 'duckdb',
    path: settings.DUCKDB_PATH,
    rawRetentionMonths: settings.RAW_RETENTION_MONTHS,
    sampleDenominator: settings.INEXACT_SAMPLE_DENOMINATOR,
    queryTimeoutMs,
    memoryLimit: settings.DUCKDB_MEMORY_LIMIT === '0' ? undefined : settings.DUCKDB_MEMORY_LIMIT,
  });
}

export function eventBusFrom(
  settings: BaseSettings,
  onWarning?: (message: string) => void,
  onConsumerStopped?: (error: Error) => void,
): EventBus {
  if (!settings.KAFKA_BROKERS) {
    return new InProcessEventBus();
  }
  return new KafkaEventBus(kafkaBusOptions(settings, onWarning, onConsumerStopped));
}

/** The Kafka event bus's options from the apps' variables (KAFKA_BROKERS set). */
export function kafkaBusOptions(
  settings: BaseSettings,
  onWarning?: (message: string) => void,
  onConsumerStopped?: (error: Error) => void,
): KafkaBusOptions {
  return {
    brokers: (settings.KAFKA_BROKERS ?? '').split(','),
    clientId: settings.KAFKA_CLIENT_ID,
    topicPrefix: settings.KAFKA_TOPIC_PREFIX,
    partitions: settings.KAFKA_PARTITIONS,
    replicationFactor: settings.KAFKA_REPLICATION_FACTOR,
    minInsyncReplicas: settings.KAFKA_MIN_INSYNC_REPLICAS,
    spoolDir: settings.KAFKA_SPOOL_DIR,
    spoolMaxBytes: settings.KAFKA_SPOOL_MAX_BYTES,
    concurrentPartitions: settings.KAFKA_CONCURRENT_PARTITIONS,
    maxBytesPerPartition: settings.KAFKA_MAX_BYTES_PER_PARTITION,
    compression: settings.KAFKA_COMPRESSION,
    producers: settings.KAFKA_PRODUCERS,
    onWarning,
    onConsumerStopped,
  };
}

export function stateStoreFrom(settings: BaseSettings): StateStore {
  if (settings.REDIS_URL) {
    return new RedisStateStore({ url: settings.REDIS_URL, keyPrefix: settings.REDIS_KEY_PREFIX });
  }
  return new MemoryStateStore();
}
