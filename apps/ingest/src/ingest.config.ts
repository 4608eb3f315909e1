import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { StoreSettings } from '@app/config';

/** The ingest app's configuration, read from the environment (see the README). */
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

  /** How often raw events (and deduplication ids) past RAW_RETENTION_MONTHS are dropped; 0 never. */
  @IsInt()
  @Min(0)
  @Max(604_800_000)
  RETENTION_INTERVAL_MS = 3_600_000;
}
