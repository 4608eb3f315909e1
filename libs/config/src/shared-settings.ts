import { Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Secret } from './config.loader';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A topic's min.insync.replicas above its replication factor would refuse every write. */
@ValidatorConstraint({ name: 'minInsyncWithinReplicas' })
class MinInsyncWithinReplicas implements ValidatorConstraintInterface {
  validate(minInsync: number, args: ValidationArguments): boolean {
    return minInsync <= (args.object as BaseSettings).KAFKA_REPLICATION_FACTOR;
  }

  defaultMessage(args: ValidationArguments): string {
    return `KAFKA_MIN_INSYNC_REPLICAS must be at most KAFKA_REPLICATION_FACTOR (${(args.object as BaseSettings).KAFKA_REPLICATION_FACTOR}): Kafka would refuse every write`;
  }
}

/** A cluster without its shards, or without the node reports read from, has nowhere to go. */
@ValidatorConstraint({ name: 'clusterComplete' })
class ClusterComplete implements ValidatorConstraintInterface {
  validate(cluster: string | undefined, args: ValidationArguments): boolean {
    const settings = args.object as StoreSettings;
    return (
      cluster === undefined ||
      (settings.CLICKHOUSE_URL !== undefined && settings.CLICKHOUSE_SHARDS !== undefined)
    );
  }

  defaultMessage(): string {
    return "CLICKHOUSE_CLUSTER needs CLICKHOUSE_SHARDS (the shards' replica URLs) and CLICKHOUSE_URL (the node reports read from)";
  }
}

/**
 * Settings every app shares: logging, the catalog, and the distributed adapters. Each of
 * KAFKA_BROKERS and REDIS_URL switches its port from the embedded adapter to the distributed one.
 */
export class BaseSettings {
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** Path of the catalog JSON; the demo catalog when unset. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  CATALOG_PATH?: string = undefined;

  /**
   * 1: the catalog file is watched and reloaded when it changes; 0: only SIGHUP reloads it (for a
   * deployment that writes the file in steps and signals when it is whole).
   */
  @Type(() => Number)
  @IsInt()
  @IsIn([0, 1])
  CATALOG_WATCH = 1;

  /** Comma-separated `host:port` list; unset means the in-process bus. */
  @IsOptional()
  @Matches(/^[A-Za-z0-9.-]+:\d{1,5}(,[A-Za-z0-9.-]+:\d{1,5})*$/, {
    message: 'KAFKA_BROKERS must be host:port[,host:port...]',
  })
  KAFKA_BROKERS?: string = undefined;

  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,64}$/)
  KAFKA_CLIENT_ID = 'adx';

  /** Prefix of every topic name, to share one cluster between environments (empty by default). */
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{0,64}$/)
  KAFKA_TOPIC_PREFIX = '';

  @IsInt()
  @Min(1)
  @Max(256)
  KAFKA_PARTITIONS = 4;

  /**
   * Brokers holding a copy of each partition of the topics the apps create (1: a single broker; 3 on the
   * cluster topology). Topics that exist already keep theirs.
   */
  @IsInt()
  @Min(1)
  @Max(16)
  KAFKA_REPLICATION_FACTOR = 1;

  /**
   * The topics' `min.insync.replicas`: copies a record needs before the producers' `acks: -1` is answered.
   * Unset: one less than KAFKA_REPLICATION_FACTOR, at least 1 (2 of 3 on the cluster).
   */
  // Converted here: the loader converts only the variables whose default is a number.
  @Type(() => Number)
  @IsOptional()
  @IsInt()
  @Min(1)
  @Validate(MinInsyncWithinReplicas)
  KAFKA_MIN_INSYNC_REPLICAS?: number = undefined;

  /** Where events wait on disk while Kafka is unreachable. */
  @IsString()
  @MinLength(1)
  KAFKA_SPOOL_DIR = 'data/spool';

  @IsInt()
  @Min(1024 * 1024)
  KAFKA_SPOOL_MAX_BYTES = 512 * 1024 * 1024;

  /** How producers compress their batches: gzip, or none (cheaper in CPU, larger on the broker). */
  @IsIn(['gzip', 'none'])
  KAFKA_COMPRESSION: 'gzip' | 'none' = 'gzip';

  /** Idempotent producers sending at once, each for its share of the partitions. */
  @IsInt()
  @Min(1)
  @Max(16)
  KAFKA_PRODUCERS = 4;

  /** Batches a consumer handles at once, each of one partition (the ingest's inserts in flight). */
  @IsInt()
  @Min(1)
  @Max(64)
  KAFKA_CONCURRENT_PARTITIONS = 2;

  /**
   * Most bytes a consumer fetches for one partition, as stored (compressed): the bound of one batch. A gzip
   * batch of 4 MiB takes seconds to handle (sizes and times in bench/journal/pipeline.md).
   */
  @IsInt()
  @Min(64 * 1024)
  @Max(64 * 1024 * 1024)
  KAFKA_MAX_BYTES_PER_PARTITION = 4 * 1024 * 1024;

  /** `redis://[user:password@]host:port[/db]`; unset means the in-memory state store. */
  @Secret()
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL?: string = undefined;

  @IsString()
  @Matches(/^[A-Za-z0-9:._-]{0,64}$/)
  REDIS_KEY_PREFIX = 'adx:';
}

/** Settings of the apps that read or write the report store. */
export class StoreSettings extends BaseSettings {
  /** DuckDB file of the embedded report store, or `:memory:`. */
  @IsString()
  @MinLength(1)
  DUCKDB_PATH = 'data/adx.duckdb';

  /**
   * DuckDB's `memory_limit` (`64MB`, `1GB`, `512MiB`…), or `0` for DuckDB's own default (80 % of the
   * machine's memory). Over it, a query's aggregate and sort spill to disk (`<DUCKDB_PATH>.tmp`, `.tmp` for
   * `:memory:`): a million-row report then keeps the server within its memory goal (BENCHMARKS.md) at the
   * price of disk I/O. The ingest's event ids have no in-memory index, so the limit bounds the ingest too.
   */
  @Matches(/^(0|([1-9]\d*(\.\d+)?|0\.\d+)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB))$/i, {
    message: "DUCKDB_MEMORY_LIMIT must be a size such as 1GB or 512MiB, or 0 for DuckDB's default",
  })
  DUCKDB_MEMORY_LIMIT = '64MB';

  /** ClickHouse HTTP URL; unset means the embedded DuckDB store. */
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/, { message: 'CLICKHOUSE_URL must be an http(s) URL' })
  CLICKHOUSE_URL?: string = undefined;

  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/)
  CLICKHOUSE_DATABASE = 'adx';

  @IsString()
  CLICKHOUSE_USER = 'default';

  @Secret()
  @IsString()
  CLICKHOUSE_PASSWORD = '';

  /**
   * The cluster's name in the ClickHouse servers' `remote_servers` (`adx` in the stack's cluster);
   * unset means one server. With it the store writes each source's events to its shard's local
   * `Replicated` tables and reads the `Distributed` tables over them (docs/distributed.md, "The
   * product on the cluster").
   */
  @IsOptional()
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { message: 'CLICKHOUSE_CLUSTER must be a cluster name' })
  @Validate(ClusterComplete)
  CLICKHOUSE_CLUSTER?: string = undefined;

  /**
   * With CLICKHOUSE_CLUSTER: the HTTP URLs of each shard's replicas, shards separated by `;` and
   * replicas by `,`, in the servers' shard order. The order routes sources to shards: never change
   * it while the tables hold data.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,;]+(,https?:\/\/[^\s,;]+)*(;https?:\/\/[^\s,;]+(,https?:\/\/[^\s,;]+)*)*$/, {
    message: 'CLICKHOUSE_SHARDS must be http(s) URLs: replicas separated by commas, shards by semicolons',
  })
  CLICKHOUSE_SHARDS?: string = undefined;

  /** Folder of the numbered ClickHouse migrations. */
  @IsString()
  @MinLength(1)
  CLICKHOUSE_MIGRATIONS_DIR = 'clickhouse';

  /** Whole months of raw events ClickHouse keeps; older monthly partitions are dropped. */
  @IsInt()
  @Min(1)
  @Max(120)
  RAW_RETENTION_MONTHS = 3;

  /** The inexact tier keeps one impression in this many (1 keeps all). */
  @IsInt()
  @Min(1)
  @Max(1000)
  INEXACT_SAMPLE_DENOMINATOR = 10;
}
