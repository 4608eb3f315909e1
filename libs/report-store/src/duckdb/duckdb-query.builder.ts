import { MEASURE_NAMES } from '@app/report-model';
import {
  dimensionExpression,
  scopeAndFilterPredicates,
  tierTable,
  type SqlDialect,
} from '../query-predicates';
import type { StoreStreamQuery } from '../report-store.port';
import { metricSql, missingRank, sqlDirection, type NumericDialect } from '../store-order';

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

const NUMERIC: NumericDialect = {
  float: (e) => `CAST(${e} AS DOUBLE)`,
  iif: (c, a, b) => `CASE WHEN ${c} THEN ${a} ELSE ${b} END`,
};

/**
 * Builds a parameterised aggregate query: every value travels as a bound parameter. The result's
 * columns are the key `k` (with a split), then the measures in `MEASURE_NAMES` order; the order
 * terms, when the query has some, sort them in SQL.
 */
export function buildDuckDbQuery(query: StoreStreamQuery): BuiltQuery {
  const params: string[] = [];
  const bind = (value: string): string => {
    params.push(value);
    return `$${params.length}`;
  };
  // Filter values arrive as text (integers in decimal form) and are compared as text here; typed
  // comparisons are the ClickHouse builder's, where they let the primary key narrow the read.
  const dialect: SqlDialect = {
    value: bind,
    filterOperand: (dimension) => ({
      expression: `CAST(${dimensionExpression(DERIVED, dimension)} AS VARCHAR)`,
      literal: bind,
    }),
    never: 'FALSE',
  };
  const where = [
    `day BETWEEN CAST(${bind(query.range.start)} AS DATE) AND CAST(${bind(query.range.end)} AS DATE)`,
    ...scopeAndFilterPredicates(query, dialect),
  ];
  const sums = MEASURE_NAMES.map((m) => `CAST(SUM(${m}) AS BIGINT) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionExpression(DERIVED, query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  const having = query.split ? '' : ' HAVING COUNT(*) > 0';
  const aggregate = `SELECT ${key}${sums} FROM ${tierTable(query.tier)} WHERE ${where.join(' AND ')}${groupBy}${having}`;
  const order = query.split ? (query.order ?? []) : [];
  if (order.length === 0) {
    return { sql: aggregate, params };
  }
  const keys: string[] = [];
  const joins: string[] = [];
  order.forEach((term, i) => {
    const direction = sqlDirection(term.direction);
    switch (term.by) {
      case 'key':
        keys.push(`t.k ${direction}`);
        break;
      case 'metric':
        keys.push(`${metricSql(term.metric, NUMERIC)} ${direction}`);
        break;
      case 'rank': {
        // A join on a list of (split value, rank) pairs: a hash join, whatever the catalog's size.
        const pairs = [...term.ranks].map(([value, rank]) => `(${bind(value)}, ${Math.trunc(rank)})`);
        if (pairs.length === 0) {
          break;
        } // every value unranked: a tie that orders nothing
        const r = `r${i + 1}`;
        joins.push(
          ` LEFT JOIN (VALUES ${pairs.join(', ')}) AS ${r}(rk, rv) ON ${r}.rk = CAST(t.k AS VARCHAR)`,
        );
        keys.push(`coalesce(${r}.rv, ${missingRank(term.ranks)}) ${direction}`);
        break;
      }
    }
  });
  // The order keys are expressions, not output columns: the sort carries only the row itself.
  return {
    sql: `SELECT t.* FROM (${aggregate}) AS t${joins.join('')} ORDER BY ${keys.join(', ')}`,
    params,
  };
}
