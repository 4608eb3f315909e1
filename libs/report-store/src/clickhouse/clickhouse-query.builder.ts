import { MEASURE_NAMES, type StoreQuery } from '@app/report-model';
import {
  dimensionExpression,
  scopeAndFilterPredicates,
  tierTable,
  type SqlDialect,
} from '../query-predicates';
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

/** Builds the aggregate query; every value is a literal from the one encoder. */
export function buildClickHouseQuery(query: StoreQuery): string {
  const dialect: SqlDialect = { value: stringLiteral, asText: (e) => `toString(${e})`, never: '0' };
  const where = [
    `day >= ${dateLiteral(query.range.start)}`,
    `day <= ${dateLiteral(query.range.end)}`,
    ...scopeAndFilterPredicates(query, dialect, DERIVED),
  ];
  const sums = MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionExpression(DERIVED, query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  // `n` lets the store drop the single all-zero row an ungrouped aggregate returns on no data.
  return `SELECT ${key}${sums}, count() AS n FROM ${tierTable(query.tier)} WHERE ${where.join(' AND ')}${groupBy}`;
}
