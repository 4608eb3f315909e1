import { IsInt, Max, Min } from 'class-validator';
import { BaseSettings } from '@app/config';

/**
 * Settings of the all-in-one process beyond those of its three apps (which read their own
 * configuration classes from the same environment).
 */
export class MainConfig extends BaseSettings {
  /** Days of demo traffic seeded when the store is empty at start; 0 disables seeding. */
  @IsInt()
  @Min(0)
  @Max(366)
  SEED_ON_EMPTY_DAYS = 30;

  @IsInt()
  @Min(1)
  @Max(10_000_000)
  SEED_EVENTS_PER_DAY = 10_000;
}
