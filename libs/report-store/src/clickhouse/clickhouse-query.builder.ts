import { MEASURE_NAMES } from '@app/report-model';
import {
  dimensionExpression,
  scopeAndFilterPredicates,
  tierTable,
  type SqlDialect,
} from '../query-predicates';
import type { StoreStreamQuery } from '../report-store.port';
import { metricSql, missingRank, sqlDirection, type NumericDialect } from '../store-order';
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

const NUMERIC: NumericDialect = {
  float: (e) => `toFloat64(${e})`,
  iif: (c, a, b) => `if(${c}, ${a}, ${b})`,
};

/**
 * Builds the aggregate query; every value is a literal from the one encoder. Its columns: `k` (with
 * a split), the measures and `n`, sorted in SQL by the order terms when the query has some.
 */
export function buildClickHouseQuery(query: StoreStreamQuery): string {
  const dialect: SqlDialect = { value: stringLiteral, asText: (e) => `toString(${e})`, never: '0' };
  const where = [
    `day >= ${dateLiteral(query.range.start)}`,
    `day <= ${dateLiteral(query.range.end)}`,
    // The marker row of a sealed day (closed-day.sealer.ts) holds no measure but is a row.
    'seal_raw_rows = 0',
    ...scopeAndFilterPredicates(query, dialect, DERIVED),
  ];
  const sums = MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionExpression(DERIVED, query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  // `n` lets the store drop the single all-zero row an ungrouped aggregate returns on no data.
  const aggregate = `SELECT ${key}${sums}, count() AS n FROM ${tierTable(query.tier)} WHERE ${where.join(' AND ')}${groupBy}`;
  const order = query.split ? (query.order ?? []) : [];
  if (order.length === 0) {
    return aggregate;
  }
  const keys = order.map((term) => {
    const direction = sqlDirection(term.direction);
    switch (term.by) {
      case 'key':
        return `k ${direction}`;
      case 'metric':
        return `${metricSql(term.metric, NUMERIC)} ${direction}`;
      case 'rank': {
        const missing = missingRank(term.ranks);
        if (term.ranks.size === 0) {
          return `${missing} ${direction}`;
        }
        // transform() looks the value up in a hash table built once from the two literal arrays.
        const values = [...term.ranks.keys()].map(stringLiteral).join(', ');
        const ranks = [...term.ranks.values()].map((r) => String(Math.trunc(r))).join(', ');
        return `transform(toString(k), [${values}], [${ranks}], ${missing}) ${direction}`;
      }
    }
  });
  return `SELECT * FROM (${aggregate}) ORDER BY ${keys.join(', ')}`;
}
