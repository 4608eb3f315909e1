import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';
import { StoreSettings } from '@app/config';

/** The ingest app's configuration, read from the environment (docs/operations.md#configuration). */
export class IngestConfig extends StoreSettings {
  @IsString()
  @MinLength(1)
  INGEST_HOST = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  INGEST_PORT = 8082;

  @IsString()
  @MinLength(1)
  INGEST_GROUP_ID = 'adx-ingest';

  /** How often closed days are checked and, where their raw events changed, sealed again; 0 never. */
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  SEAL_INTERVAL_MS = 1_000;

  /** The longest pause between two tries of a block of events the report store refused. */
  @IsInt()
  @Min(10)
  @Max(60_000)
  INGEST_RETRY_MAX_MS = 5_000;

  /** `/health` is down when events wait and none has been stored for this long. */
  @IsInt()
  @Min(1_000)
  @Max(3_600_000)
  INGEST_STALL_MS = 60_000;

  /**
   * The process exits (status 1, for its supervisor to restart it) when events wait and no batch
   * has even been tried for this long: its consumer stopped while it lives. 0 never.
   */
  @IsInt()
  @Min(0)
  @Max(86_400_000)
  INGEST_WEDGED_EXIT_MS = 300_000;

  /**
   * On a ClickHouse cluster: how many replicas of a shard must hold an INSERT before it is
   * acknowledged (ClickHouse's `insert_quorum`), and so before the batch's Kafka offsets are
   * committed. Unset means every replica of the shard (CLICKHOUSE_SHARDS); 1 means the replica
   * written to alone, whose rows are then out of reach (and lost with its disk) until the other
   * fetched them. Above a shard's replica count the ingest refuses to start. Ignored on one server.
   */
  // Converted here: the loader converts only the variables whose default is a number.
  @Type(() => Number)
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(16)
  CLICKHOUSE_INSERT_QUORUM?: number = undefined;

  /** How often raw events (and deduplication ids) past RAW_RETENTION_MONTHS are dropped; 0 never. */
  @IsInt()
  @Min(0)
  @Max(604_800_000)
  RETENTION_INTERVAL_MS = 3_600_000;
}
