import { findSplit, type StoreQuery } from '@app/report-model';
import { MEASURE_NAMES } from '@app/report-model';

/** SQL for a dimension in a tier's table; only names from the split catalog ever get here. */
const DERIVED: Readonly<Record<string, string>> = {
  year: 'CAST(year(day) AS INTEGER)',
  month: 'CAST(month(day) AS INTEGER)',
  year_month: "strftime(day, '%Y %m')",
  day: "strftime(day, '%Y-%m-%d')",
  day_hour: "strftime(day, '%Y-%m-%d') || ' ' || lpad(CAST(hour AS VARCHAR), 2, '0')",
  hour: 'CAST(hour AS INTEGER)',
  segmented_keys: 'segment_key',
  segmented_values: 'segment_value',
};

export function dimensionSql(dimension: string): string {
  const split = findSplit(dimension);
  if (!split) throw new Error(`not a dimension: ${dimension}`);
  return DERIVED[dimension] ?? split.name;
}

export interface BuiltQuery {
  readonly sql: string;
  readonly params: string[];
}

/** Builds a parameterised aggregate query: every value travels as a bound parameter. */
export function buildDuckDbQuery(query: StoreQuery): BuiltQuery {
  const params: string[] = [];
  const bind = (value: string): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const table = query.tier === 'exact' ? 'exact_daily' : 'inexact_sample';
  const where = [
    `day BETWEEN CAST(${bind(query.range.start)} AS DATE) AND CAST(${bind(query.range.end)} AS DATE)`,
  ];
  const inList = (values: readonly string[]) => values.map(bind).join(', ');
  if (query.scope.publisherIds) {
    where.push(
      query.scope.publisherIds.length ? `publisher_id IN (${inList(query.scope.publisherIds)})` : 'FALSE',
    );
  }
  if (query.scope.advertiserIds) {
    where.push(
      query.scope.advertiserIds.length ? `advertiser_id IN (${inList(query.scope.advertiserIds)})` : 'FALSE',
    );
  }
  for (const filter of query.filters) {
    const column = `CAST(${dimensionSql(filter.dimension)} AS VARCHAR)`;
    const negate = filter.operator === 'not equals';
    if (filter.values.length === 0) {
      if (!negate) where.push('FALSE');
      continue;
    }
    where.push(`${column} ${negate ? 'NOT IN' : 'IN'} (${inList(filter.values)})`);
  }
  const sums = MEASURE_NAMES.map((m) => `CAST(SUM(${m}) AS BIGINT) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionSql(query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  const having = query.split ? '' : ' HAVING COUNT(*) > 0';
  return {
    sql: `SELECT ${key}${sums} FROM ${table} WHERE ${where.join(' AND ')}${groupBy}${having}`,
    params,
  };
}
