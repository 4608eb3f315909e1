import { findSplit, type StoreQuery } from '@app/report-model';

/** What differs between the stores' SQL; everything else in a query's WHERE is shared. */
export interface SqlDialect {
  /** A value as SQL: a bound parameter (DuckDB) or an escaped literal (ClickHouse). */
  value(text: string): string;
  /** How a filter on the dimension compares. Only names from the split catalog ever get here. */
  filterOperand(dimension: string): FilterOperand;
  /** A predicate that is never true. */
  readonly never: string;
}

/** The two sides of a filter's `IN`: the dimension's SQL, and each value as SQL of the same type. */
export interface FilterOperand {
  readonly expression: string;
  /** Undefined for a value that is not of the dimension's type: no row has it. */
  literal(value: string): string | undefined;
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
export function scopeAndFilterPredicates(query: StoreQuery, dialect: SqlDialect): string[] {
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
    const operand = dialect.filterOperand(filter.dimension);
    const literals = filter.values.flatMap((v) => operand.literal(v) ?? []);
    if (literals.length === 0) {
      if (!negate) {
        predicates.push(dialect.never);
      }
      continue;
    }
    predicates.push(`${operand.expression} ${negate ? 'NOT IN' : 'IN'} (${literals.join(', ')})`);
  }
  return predicates;
}
