import { SPLITS } from '@app/report-model';
import { stringLiteral } from './clickhouse-literal';

/**
 * The rollup of the inexact tier (`inexact_daily`, clickhouse/006_inexact_rollup.sql): the sample
 * summed per day, dimension, value and account. This module names its dimensions and how a raw
 * row gives each value; the query builder decides which queries it answers.
 */

/** The account scope's columns (query-predicates.ts), kept as keys: every API query is scoped. */
export const ROLLUP_SCOPE_FIELDS = ['publisher_id', 'advertiser_id'] as const;

/**
 * The sides of the rollup's monthly copy (clickhouse/009_inexact_monthly.sql): '' the rollup's rows,
 * the others the same summed over every account column but the side's own.
 */
export const MONTHLY_SIDES = ['', 'advertiser', 'publisher'] as const;
export type MonthlySide = (typeof MONTHLY_SIDES)[number];

/** The side that keeps each account column. */
export const SIDE_OF: Readonly<Record<(typeof ROLLUP_SCOPE_FIELDS)[number], MonthlySide>> = {
  publisher_id: 'publisher',
  advertiser_id: 'advertiser',
};

/** The hour as `day_hour` shows it, zero-padded: the rollup stores it so. */
export const PADDED_HOUR_SQL = "if(hour < 10, concat('0', toString(hour)), toString(hour))";

/** The events_raw column an inexact split reads, where it is not the split's own name. */
const READS: Readonly<Record<string, string>> = {
  hour: 'hour',
  day_hour: 'hour',
  segmented_keys: 'segment_key',
  segmented_values: 'segment_value',
};

/**
 * The rollup's dimensions: the column of every split that is inexact in some variant (publisher
 * domain is, for advertiser-only users), in the split catalog's order.
 */
export const ROLLUP_DIMENSIONS: readonly string[] = [
  ...new Set(
    SPLITS.filter((s) => s.exactness === 'inexact' || s.variantExactness === 'inexact').map(
      (s) => READS[s.name] ?? s.name,
    ),
  ),
];

/** The rollup dimension whose values a split is read from, or undefined when it has none. */
export function rollupDimensionOf(split: string): string | undefined {
  const column = READS[split] ?? split;
  return ROLLUP_DIMENSIONS.includes(column) ? column : undefined;
}

/** The ARRAY JOIN list over a raw row: one `(dimension, value)` pair per rollup dimension. */
export const ROLLUP_PAIRS_SQL = `[${ROLLUP_DIMENSIONS.map(
  (d) => `(${stringLiteral(d)}, ${d === 'hour' ? PADDED_HOUR_SQL : d})`,
).join(', ')}]`;
