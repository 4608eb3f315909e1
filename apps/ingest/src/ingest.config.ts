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
}
