import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { DEVICE_TYPES } from '@app/audience';
import { AGE_RANGES, GENDERS } from '@app/report-model';

/** What a goal counts: impressions served, clicks, or spend (micro-USD at the strategy's CPM). */
export const GOAL_METRICS = ['impressions', 'clicks', 'spend'] as const;
export type GoalMetric = (typeof GOAL_METRICS)[number];

/** `even`: spread over the flight hour by hour, catching up after a slow hour; `asap`: as fast as traffic allows. */
export const PACING_MODES = ['even', 'asap'] as const;
export type PacingMode = (typeof PACING_MODES)[number];

/** A frequency cap's window: the reader's clock hour, day (publisher's time zone) or the whole flight. */
export const CAP_PERIODS = ['hour', 'day', 'flight'] as const;
export type CapPeriod = (typeof CAP_PERIODS)[number];

/**
 * Sponsorship (a guaranteed share of a slot's impressions) goes before standard (the highest price
 * with RTB) before house (only when nothing paid wants the slot).
 */
export const BOOKING_PRIORITIES = ['sponsorship', 'standard', 'house'] as const;
export type BookingPriority = (typeof BOOKING_PRIORITIES)[number];

/**
 * A flight bound as the publisher's wall clock reads it: `2026-03-01` (a day: the start's midnight,
 * or the whole end day) or `2026-03-01T09:00`.
 */
export const LOCAL_TIME_PATTERN = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(T([01]\d|2[0-3]):[0-5]\d)?$/;

const TOKEN = /^[A-Za-z0-9][A-Za-z0-9._:/ -]{0,99}$/;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const COUNTRY = /^[A-Z]{2}$/;
/**
 * A region inside its country, `<country>-<region as the geo resolver names it>`: `US-CA` where the
 * resolver gives ISO 3166-2 codes, `US-California` where it gives names; matched case-insensitively.
 */
const REGION = /^[A-Z]{2}-[A-Za-z0-9][A-Za-z0-9 .'-]{0,59}$/;
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/** Goals count whole units: impressions, clicks, or micro-USD of spend. */
export class GoalRecord {
  @IsIn(GOAL_METRICS)
  metric!: GoalMetric;

  /** Over the whole flight. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER / 1_000_000)
  lifetime?: number;

  /** Per day of the flight, in the publisher's time zone. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER / 1_000_000)
  daily?: number;
}

/** At most `count` views by one reader per `period`. */
export class FrequencyCapRecord {
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  count!: number;

  @IsIn(CAP_PERIODS)
  period!: CapPeriod;
}

/** Values to run on (`include`: only those) and to keep off (`exclude`), exclusion first. */
export class IncludeExcludeRecord {
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(100, { each: true })
  include?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @MinLength(1, { each: true })
  @MaxLength(100, { each: true })
  exclude?: string[];
}

/** A tag key-value (`kv=key:value`) whose value is one of `values`. */
export class KeyValueRuleRecord {
  @Matches(TOKEN)
  key!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(200)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  values!: string[];
}

/**
 * Who and where the booking runs. Every dimension given must match; a dimension left out matches
 * all. A request that does not say a value (no age, unknown country) fails an `include` of it.
 */
export class TargetingRecord {
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) publishers?: IncludeExcludeRecord;
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) templates?: IncludeExcludeRecord;
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) adSlots?: IncludeExcludeRecord;
  /** The tag's `list`: the publisher's mailing lists. */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) lists?: IncludeExcludeRecord;

  /** Every rule must hold. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => KeyValueRuleRecord)
  keyValuesAllOf?: KeyValueRuleRecord[];

  /** At least one rule must hold. */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ValidateNested({ each: true })
  @Type(() => KeyValueRuleRecord)
  keyValuesAnyOf?: KeyValueRuleRecord[];

  /** ISO 3166-1 alpha-2. */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) countries?: IncludeExcludeRecord;
  /** `<country>-<region>` (`US-CA`). */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) regions?: IncludeExcludeRecord;
  /** `PC`, `Phone`, `Tablet`, `WebmailProxy`, `MediaCenter`. */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) deviceTypes?: IncludeExcludeRecord;
  /** As the device resolver names them (`iOS`, `Android`, `Windows`), case-insensitive. */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) os?: IncludeExcludeRecord;
  /** The browser or email client (`Gmail`, `Apple Mail`, `Outlook`), case-insensitive. */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) browsers?: IncludeExcludeRecord;
  /** The reader's email domain (the tag's `email_domain`). */
  @IsOptional() @ValidateNested() @Type(() => IncludeExcludeRecord) emailDomains?: IncludeExcludeRecord;

  /** Age ranges of reporting: `18-20`, `21-24`, `25-34`, `35-44`, `45-54`, `55-64`, `65+`. */
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(AGE_RANGES, { each: true })
  ages?: string[];

  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(GENDERS, { each: true })
  genders?: string[];
}

/**
 * How a campaign or a strategy is sold (docs/direct-campaigns.md). On a campaign it binds all its
 * strategies together (one goal, one cap, one flight they share); on a strategy, that strategy alone.
 * A campaign without a booking runs everywhere its creatives fit, for good, as before.
 */
export class BookingRecord {
  /** First moment of the flight, publisher's time zone; absent: already started. */
  @IsOptional()
  @Matches(LOCAL_TIME_PATTERN, { message: 'start must be YYYY-MM-DD or YYYY-MM-DDTHH:mm' })
  start?: string;

  /** Last day (whole) or moment (exclusive) of the flight; absent: no end (then no even pacing). */
  @IsOptional()
  @Matches(LOCAL_TIME_PATTERN, { message: 'end must be YYYY-MM-DD or YYYY-MM-DDTHH:mm' })
  end?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(3)
  @ValidateNested({ each: true })
  @Type(() => GoalRecord)
  goals?: GoalRecord[];

  @IsOptional()
  @IsIn(PACING_MODES)
  pacing?: PacingMode;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(3)
  @ValidateNested({ each: true })
  @Type(() => FrequencyCapRecord)
  frequencyCaps?: FrequencyCapRecord[];

  @IsOptional()
  @ValidateNested()
  @Type(() => TargetingRecord)
  targeting?: TargetingRecord;

  /** Standard when absent. */
  @IsOptional()
  @IsIn(BOOKING_PRIORITIES)
  priority?: BookingPriority;

  /** For a sponsorship: the share of each targeted slot's impressions it is guaranteed (0-1]. */
  @IsOptional()
  @IsNumber()
  @Min(0.001)
  @Max(1)
  sponsorshipShare?: number;

  /**
   * Competitive exclusion: two bookings that share a group never appear in one email (one open:
   * the same placement and reader). E.g. `airlines`, `competitor-of:acme`.
   */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(ID_PATTERN, { each: true })
  exclusionGroups?: string[];

  /** For a takeover campaign: the publisher's template it owns for its flight. */
  @IsOptional()
  @Matches(ID_PATTERN)
  takeoverTemplateId?: string;
}

/** Patterns the booking checks share with the booking library. */
export const BOOKING_PATTERNS = { COUNTRY, REGION, DOMAIN } as const;
export const BOOKING_DEVICE_TYPES: readonly string[] = DEVICE_TYPES;
