import { MEASURE_NAMES, SPLITS, type StoreQuery } from '@app/report-model';
import {
  dimensionExpression,
  scopeAndFilterPredicates,
  tierTable,
  type SqlDialect,
} from '../query-predicates';
import type { StoreStreamQuery } from '../report-store.port';
import { metricSql, missingRank, sqlDirection, type NumericDialect } from '../store-order';
import { calendarDayLiteral, dateLiteral, stringLiteral } from './clickhouse-literal';
import {
  PADDED_HOUR_SQL,
  ROLLUP_SCOPE_FIELDS,
  SIDE_OF,
  rollupDimensionOf,
  type MonthlySide,
} from './inexact-rollup';

/** ClickHouse SQL of each derived dimension, written for 18.16 and current releases alike. */
const DERIVED: Readonly<Record<string, string>> = {
  year: 'toUInt16(toYear(day))',
  month: 'toUInt8(toMonth(day))',
  year_month:
    "concat(substring(toString(toYYYYMM(day)), 1, 4), ' ', substring(toString(toYYYYMM(day)), 5, 2))",
  day: 'toString(day)',
  day_hour: `concat(toString(day), ' ', ${PADDED_HOUR_SQL})`,
  hour: 'hour',
  segmented_keys: 'segment_key',
  segmented_values: 'segment_value',
};

/** A decimal integer no larger than the column type's maximum; anything else is no row's value. */
const integerLiteral =
  (max: number) =>
  (value: string): string | undefined =>
    /^\d{1,10}$/.test(value) && Number(value) <= max ? String(Number(value)) : undefined;

/** How a filter compares one dimension: the SQL to compare, when not the split's, and the literals. */
interface TypedFilter {
  readonly expression?: string;
  readonly literal: (value: string) => string | undefined;
}

/**
 * Filters compare each dimension in its own type, String columns bare, so that the primary key
 * narrows the read: the integer dimensions as integers, the day as a Date (not its text, which
 * is the split's value). Every other dimension is a String column or a String expression.
 */
const TYPED: Readonly<Record<string, TypedFilter>> = {
  year: { literal: integerLiteral(0xffff) },
  month: { literal: integerLiteral(0xff) },
  hour: { literal: integerLiteral(0xff) },
  day: { expression: 'day', literal: calendarDayLiteral },
};

/**
 * The rollup stores the hour as zero-padded text: a filter compares that text, as 18.16 fails
 * `toUInt8(value) IN (...)` on the key column `value` ("not of fixed size").
 */
const ROLLUP_TYPED: Readonly<Record<string, TypedFilter>> = {
  ...TYPED,
  hour: {
    expression: 'value',
    literal: (value) => {
      const hour = integerLiteral(0xff)(value);
      return hour === undefined ? undefined : stringLiteral(hour.padStart(2, '0'));
    },
  },
};

/** Where a query reads from: its table, the SQL of each dimension there, and its own predicates. */
interface Source {
  readonly table: string;
  readonly derived: Readonly<Record<string, string>>;
  readonly typed: Readonly<Record<string, TypedFilter>>;
  readonly where: readonly string[];
}

/** The rollup's SQL of the splits it answers from its key columns, whatever dimension it reads. */
const ROLLUP_KEYED: Readonly<Record<string, string>> = {
  year: DERIVED.year,
  month: DERIVED.month,
  year_month: DERIVED.year_month,
  day: DERIVED.day,
  ...Object.fromEntries(ROLLUP_SCOPE_FIELDS.map((f) => [f, f])),
};

/** The rollup's SQL of the splits read from a dimension's values, where it is not the value itself. */
const ROLLUP_VALUE: Readonly<Record<string, string>> = {
  hour: 'toUInt8(value)',
  day_hour: "concat(toString(day), ' ', value)",
};

/**
 * The dimension read when a query needs none (the totals of an inexact report without filters):
 * every sampled row has one entry under each dimension, and `hour` has at most 24 values a day.
 */
const TOTALS_DIMENSION = 'hour';

/**
 * The rollup dimension an inexact query can be answered from, exactly as the sample would answer
 * it: the split and every filter are on that one dimension, the day or the account scope's
 * columns. Undefined when the query must read the sample (an exact split, or two dimensions).
 */
export function rollupDimensionFor(query: StoreQuery): string | undefined {
  if (query.tier !== 'inexact') {
    return undefined;
  }
  const needed = new Set<string>();
  for (const name of [query.split, ...query.filters.map((f) => f.dimension)]) {
    if (name === undefined || Object.hasOwn(ROLLUP_KEYED, name)) {
      continue;
    }
    const dimension = rollupDimensionOf(name);
    if (dimension === undefined) {
      return undefined;
    }
    needed.add(dimension);
  }
  return needed.size > 1 ? undefined : ([...needed][0] ?? TOTALS_DIMENSION);
}

function sourceOf(query: StoreQuery, inexactRollup: boolean): Source {
  const dimension = inexactRollup ? rollupDimensionFor(query) : undefined;
  if (dimension === undefined) {
    // The marker row of a sealed day (closed-day.sealer.ts) holds no measure but is a row.
    return { table: tierTable(query.tier), derived: DERIVED, typed: TYPED, where: ['seal_mark = 0'] };
  }
  const derived: Record<string, string> = { ...ROLLUP_KEYED };
  for (const split of SPLITS) {
    if (rollupDimensionOf(split.name) === dimension) {
      derived[split.name] = ROLLUP_VALUE[split.name] ?? 'value';
    }
  }
  return {
    table: 'inexact_daily',
    derived,
    typed: ROLLUP_TYPED,
    // A sealed day's marker row has an empty dimension, so this predicate leaves it out without
    // `seal_mark = 0`: one column fewer to read from each of the range's daily parts.
    where: [`dimension = ${stringLiteral(dimension)}`],
  };
}

export interface ClickHouseQueryOptions {
  /**
   * Whether inexact queries the rollup can answer read it (the default) rather than the sample:
   * false compares the two paths.
   */
  readonly inexactRollup?: boolean;
  /**
   * The newest day with a seal marker in `inexact_monthly` (`YYYY-MM-DD`), if known: the rollup is
   * read from there up to that day, which the monthly copy holds whole, and from `inexact_daily`
   * after it. Any day the copy held once will do, as it only grows; none reads `inexact_daily` alone.
   */
  readonly monthlyThrough?: string;
}

/**
 * The side of the monthly copy a query reads: the side of the one account column it names (scope,
 * split or filter), the rollup's own rows when it names both, and the advertiser side when it
 * names neither (each side holds every sampled row once).
 */
export function monthlySide(query: StoreQuery): MonthlySide {
  const names = (field: (typeof ROLLUP_SCOPE_FIELDS)[number]) =>
    query.scope[field === 'publisher_id' ? 'publisherIds' : 'advertiserIds'] !== undefined ||
    query.split === field ||
    query.filters.some((f) => f.dimension === field);
  const [publisher, advertiser] = [names('publisher_id'), names('advertiser_id')];
  return publisher && advertiser ? '' : SIDE_OF[publisher ? 'publisher_id' : 'advertiser_id'];
}

/**
 * Where a rollup query reads each part of its range, and what it adds to its predicates there: the
 * monthly copy up to `through`, then the daily rollup.
 */
function rollupTables(query: StoreQuery, through: string | undefined): [string, string[]][] {
  const monthly = `side = ${stringLiteral(monthlySide(query))}`;
  if (through === undefined || through < query.range.start) {
    return [['inexact_daily', []]];
  }
  if (through >= query.range.end) {
    return [['inexact_monthly', [monthly]]];
  }
  return [
    ['inexact_monthly', [monthly, `day <= ${dateLiteral(through)}`]],
    ['inexact_daily', [`day > ${dateLiteral(through)}`]],
  ];
}

const NUMERIC: NumericDialect = {
  float: (e) => `toFloat64(${e})`,
  iif: (c, a, b) => `if(${c}, ${a}, ${b})`,
};

/**
 * Builds the aggregate query; every value is a literal from the one encoder. Its columns: `k` (with
 * a split), the measures and `n`, sorted in SQL by the order terms when the query has some.
 */
export function buildClickHouseQuery(
  query: StoreStreamQuery,
  { inexactRollup = true, monthlyThrough }: ClickHouseQueryOptions = {},
): string {
  const source = sourceOf(query, inexactRollup);
  const dialect: SqlDialect = {
    value: stringLiteral,
    filterOperand: (dimension) => {
      const expression = dimensionExpression(source.derived, dimension);
      const typed = source.typed[dimension];
      return typed
        ? { expression: typed.expression ?? expression, literal: typed.literal }
        : { expression, literal: stringLiteral };
    },
    never: '0',
  };
  const where = [
    `day >= ${dateLiteral(query.range.start)}`,
    `day <= ${dateLiteral(query.range.end)}`,
    ...source.where,
    ...scopeAndFilterPredicates(query, dialect),
  ];
  const sums = MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ');
  const key = query.split ? `${dimensionExpression(source.derived, query.split)} AS k, ` : '';
  const groupBy = query.split ? ' GROUP BY k' : '';
  // `n` lets the store drop the single all-zero row an ungrouped aggregate returns on no data.
  const tables: [string, string[]][] =
    source.table === 'inexact_daily' ? rollupTables(query, monthlyThrough) : [[source.table, []]];
  const parts = tables.map(
    ([table, more]) =>
      `SELECT ${key}${sums}, count() AS n FROM ${table} WHERE ${[...where, ...more].join(' AND ')}${groupBy}`,
  );
  const aggregate =
    parts.length === 1
      ? parts[0]
      : `SELECT ${query.split ? 'k, ' : ''}${sums}, sum(n) AS n FROM (${parts.join(' UNION ALL ')})${groupBy}`;
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
