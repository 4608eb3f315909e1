import { findSplit, type StoreQuery } from '@app/report-model';

/** What differs between the stores' SQL; everything else in a query's WHERE is shared. */
export interface SqlDialect {
  /** A value as SQL: a bound parameter (DuckDB) or an escaped literal (ClickHouse). */
  value(text: string): string;
  /** A dimension's expression converted to text, to compare with filter values. */
  asText(expression: string): string;
  /** A predicate that is never true. */
  readonly never: string;
}

export function tierTable(tier: StoreQuery['tier']): string {
  return tier === 'exact' ? 'exact_daily' : 'inexact_sample';
}

/**
 * A dimension's SQL: its derived expression in this dialect, or its own column. Only names from
 * the split catalog ever get here.
 */
export function dimensionExpression(derived: Readonly<Record<string, string>>, dimension: string): string {
  const split = findSplit(dimension);
  if (!split) {
    throw new Error(`not a dimension: ${dimension}`);
  }
  return derived[dimension] ?? split.name;
}

/** The account scope and the filters of a query as predicates, to be combined with AND. */
export function scopeAndFilterPredicates(
  query: StoreQuery,
  dialect: SqlDialect,
  derived: Readonly<Record<string, string>>,
): string[] {
  const inList = (values: readonly string[]) => values.map((v) => dialect.value(v)).join(', ');
  const predicates: string[] = [];
  const scope: [string, readonly string[] | undefined][] = [
    ['publisher_id', query.scope.publisherIds],
    ['advertiser_id', query.scope.advertiserIds],
  ];
  for (const [column, ids] of scope) {
    if (ids) {
      predicates.push(ids.length ? `${column} IN (${inList(ids)})` : dialect.never);
    }
  }
  for (const filter of query.filters) {
    const negate = filter.operator === 'not equals';
    if (filter.values.length === 0) {
      if (!negate) {
        predicates.push(dialect.never);
      }
      continue;
    }
    const column = dialect.asText(dimensionExpression(derived, filter.dimension));
    predicates.push(`${column} ${negate ? 'NOT IN' : 'IN'} (${inList(filter.values)})`);
  }
  return predicates;
}
