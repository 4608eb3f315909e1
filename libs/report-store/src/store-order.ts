import { MEASURE_NAMES, findMetric } from '@app/report-model';

export type OrderDirection = 'asc' | 'desc';

/**
 * One term of the order of a streamed query. The terms order rows the way the reporting app
 * compares its values: numbers by value, text by code point (the stores compare UTF-8 bytes), and a
 * value the catalog does not have after every value ascending, before them descending.
 */
export type StoreOrderTerm =
  /** The split value. */
  | { readonly by: 'key'; readonly direction: OrderDirection }
  /**
   * A metric column as the API returns it: computed from the row's sums with the catalog's formula
   * in double precision, decimals rounded half up to 4 places, so that equal values tie.
   */
  | { readonly by: 'metric'; readonly metric: string; readonly direction: OrderDirection }
  /**
   * A value the store does not hold (a catalog attribute of the split value), as ranks: each split
   * value's rank among the attribute's values, equal values sharing a rank. A split value missing
   * from the map (no attribute) ranks after all of them.
   */
  | {
      readonly by: 'rank';
      readonly ranks: ReadonlyMap<string, number>;
      readonly direction: OrderDirection;
    };

/** The numeric SQL the two stores spell differently. */
export interface NumericDialect {
  /** An expression as a double. */
  float(expression: string): string;
  /** `condition ? then : otherwise`. */
  iif(condition: string, then: string, otherwise: string): string;
}

const IMPRESSIONS = '(unique_impressions + reopens)';
const ACQUISITIONS = '(conversions + post_view_conversions)';

/**
 * A metric's SQL over the columns of one aggregated row (named as the measures), operation for
 * operation the formula of `@app/report-model`'s metric catalog, so that doubles round alike.
 */
export function metricSql(name: string, d: NumericDialect): string {
  const metric = findMetric(name);
  if (!metric) {
    throw new Error(`not a metric: ${name}`);
  }
  const money = (column: string) => `(${d.float(column)} / 1000000)`;
  // ratio(numerator, denominator, scale) = denominator === 0 ? 0 : (numerator * scale) / denominator
  const ratio = (numerator: string, denominator: string, scale?: number) =>
    d.iif(
      `${denominator} = 0`,
      '0',
      `(${scale === undefined ? numerator : `(${numerator} * ${scale})`} / ${d.float(denominator)})`,
    );
  const value = ((): string => {
    switch (name) {
      case 'impressions':
        return IMPRESSIONS;
      case 'ctr':
        return ratio(d.float('clicks'), IMPRESSIONS, 100);
      case 'ccr':
        return ratio(d.float('conversions'), 'clicks', 100);
      case 'revenue':
        return money('revenue_micros');
      case 'net_cpm':
        return ratio(money('revenue_micros'), IMPRESSIONS, 1000);
      case 'net_cpc':
        return ratio(money('revenue_micros'), 'clicks');
      case 'net_cpa':
        return ratio(money('revenue_micros'), ACQUISITIONS);
      case 'spend':
        return money('spend_micros');
      case 'gross_cpm':
        return ratio(money('spend_micros'), IMPRESSIONS, 1000);
      case 'gross_cpc':
        return ratio(money('spend_micros'), 'clicks');
      case 'gross_cpa':
        return ratio(money('spend_micros'), ACQUISITIONS);
      default:
        if ((MEASURE_NAMES as readonly string[]).includes(name)) {
          return name;
        }
        throw new Error(`no SQL for the metric ${name}`);
    }
  })();
  if (metric.dataType !== 'decimal') {
    return value;
  }
  // Math.round(value * 10000): half up, exactly (x - floor(x) is exact in double precision).
  const scaled = `(${value} * 10000)`;
  return d.iif(`${scaled} - floor(${scaled}) >= 0.5`, `ceil(${scaled})`, `floor(${scaled})`);
}

/** The rank given to split values missing from a rank term: after every ranked value. */
export function missingRank(ranks: ReadonlyMap<string, number>): number {
  let max = -1;
  for (const rank of ranks.values()) {
    max = Math.max(max, rank);
  }
  return max + 1;
}

export const sqlDirection = (direction: OrderDirection): string => (direction === 'asc' ? 'ASC' : 'DESC');
