import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { StoreSettings } from '@app/config';

/** The reporting app's configuration, read from the environment (docs/operations.md#configuration). */
export class ReportingConfig extends StoreSettings {
  @IsString()
  @MinLength(1)
  REPORTING_HOST = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  REPORTING_PORT = 8081;

  /** Requests a second per user (reporting part 8, docs/specification-notes.md#reporting-part-8). */
  @IsInt()
  @Min(1)
  @Max(10_000)
  RATE_LIMIT_PER_SECOND = 1;

  /**
   * How far a seed may be from the server clock, in seconds (reporting part 5,
   * docs/specification-notes.md#reporting-part-5).
   */
  @IsInt()
  @Min(1)
  @Max(3600)
  SEED_WINDOW_SECONDS = 300;

  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  MAX_BODY_BYTES = 1024 * 1024;

  @IsInt()
  @Min(1)
  @Max(600_000)
  QUERY_TIMEOUT_MS = 30_000;
}
