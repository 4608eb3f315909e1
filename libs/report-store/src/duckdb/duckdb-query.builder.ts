import { MEASURE_NAMES, type StoreQuery } from '@app/report-model';
import {
  dimensionExpression,
  scopeAndFilterPredicates,
  tierTable,
  type SqlDialect,
} from '../query-predicates';

/** DuckDB SQL of each derived dimension. */
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
  const dialect: SqlDialect = { value: bind, asText: (e) => `CAST(${e} AS VARCHAR)`, never: 'FALSE' };
  const where = [
    `day BETWEEN CAST(${bind(query.range.start)} AS DATE) AND CAST(${bind(query.range.end)} AS DATE)`,
    ...scopeAndFilterPredicates(query, dialect, DERIVED),
  ];
  const sums = MEASURE_NAMES.map((m) => `CAST(SUM(${m}) AS BIGINT) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionExpression(DERIVED, query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  const having = query.split ? '' : ' HAVING COUNT(*) > 0';
  return {
    sql: `SELECT ${key}${sums} FROM ${tierTable(query.tier)} WHERE ${where.join(' AND ')}${groupBy}${having}`,
    params,
  };
}
