import { IsIn, IsInt, Max, Min } from 'class-validator';
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

  /**
   * Emails opened yesterday through the real ad tag and auction when seeding (the days before come
   * from the generator); 0 sends none.
   */
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  SEED_AUCTION_OPENS = 2_000;

  /**
   * 1 starts a DSP simulator on every loopback endpoint of the catalog's DSPs that nothing listens
   * on, so that the demo runs real auctions; 0 starts none.
   */
  @IsIn([0, 1])
  DEMO_DSPS: 0 | 1 = 1;
}
