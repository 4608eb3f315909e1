import { IsIn, IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Settings every app shares: logging and the catalog. */
export class BaseSettings {
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** Path of the catalog JSON; the demo catalog when unset. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  CATALOG_PATH?: string = undefined;
}

/** Settings of the apps that read or write the report store. */
export class StoreSettings extends BaseSettings {
  /** DuckDB file of the embedded report store, or `:memory:`. */
  @IsString()
  @MinLength(1)
  DUCKDB_PATH = 'data/adx.duckdb';

  /** The inexact tier keeps one impression in this many (1 keeps all). */
  @IsInt()
  @Min(1)
  @Max(1000)
  INEXACT_SAMPLE_DENOMINATOR = 10;
}
