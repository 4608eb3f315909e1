import { MEASURE_NAMES, findSplit, type StoreQuery } from '@app/report-model';
import { dateLiteral, stringLiteral } from './clickhouse-literal';

const padHour = "if(hour < 10, concat('0', toString(hour)), toString(hour))";

/** ClickHouse SQL of each derived dimension, written for 18.16 and current releases alike. */
const DERIVED: Readonly<Record<string, string>> = {
  year: 'toUInt16(toYear(day))',
  month: 'toUInt8(toMonth(day))',
  year_month:
    "concat(substring(toString(toYYYYMM(day)), 1, 4), ' ', substring(toString(toYYYYMM(day)), 5, 2))",
  day: 'toString(day)',
  day_hour: `concat(toString(day), ' ', ${padHour})`,
  hour: 'hour',
  segmented_keys: 'segment_key',
  segmented_values: 'segment_value',
};

function dimensionSql(dimension: string): string {
  const split = findSplit(dimension);
  if (!split) throw new Error(`not a dimension: ${dimension}`);
  return DERIVED[dimension] ?? split.name;
}

/** Builds the aggregate query; every value is a literal from the one encoder. */
export function buildClickHouseQuery(query: StoreQuery): string {
  const table = query.tier === 'exact' ? 'exact_daily' : 'inexact_sample';
  const where = [`day >= ${dateLiteral(query.range.start)}`, `day <= ${dateLiteral(query.range.end)}`];
  const inList = (values: readonly string[]) => values.map(stringLiteral).join(', ');
  if (query.scope.publisherIds) {
    where.push(
      query.scope.publisherIds.length ? `publisher_id IN (${inList(query.scope.publisherIds)})` : '0',
    );
  }
  if (query.scope.advertiserIds) {
    where.push(
      query.scope.advertiserIds.length ? `advertiser_id IN (${inList(query.scope.advertiserIds)})` : '0',
    );
  }
  for (const filter of query.filters) {
    const negate = filter.operator === 'not equals';
    if (filter.values.length === 0) {
      if (!negate) where.push('0');
      continue;
    }
    where.push(
      `toString(${dimensionSql(filter.dimension)}) ${negate ? 'NOT IN' : 'IN'} (${inList(filter.values)})`,
    );
  }
  const sums = MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionSql(query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  // `n` lets the store drop the single all-zero row an ungrouped aggregate returns on no data.
  return `SELECT ${key}${sums}, count() AS n FROM ${table} WHERE ${where.join(' AND ')}${groupBy}`;
}
