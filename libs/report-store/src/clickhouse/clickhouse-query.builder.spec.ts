import { describe, expect, it } from 'vitest';
import { MEASURE_NAMES, type StoreQuery } from '@app/report-model';
import type { StoreStreamQuery } from '../report-store.port';
import { buildClickHouseQuery } from './clickhouse-query.builder';
import { stringLiteral } from './clickhouse-literal';

const HOSTILE = "x\\'); DROP TABLE exact_daily; --\n";

const QUERY: StoreQuery = {
  range: { start: '2026-11-01', end: '2026-11-30' },
  filters: [],
  scope: { publisherIds: ['pub-1', 'pub-2'] },
  tier: 'exact',
};

function build(overrides: Partial<StoreStreamQuery> = {}): string {
  return buildClickHouseQuery({ ...QUERY, ...overrides });
}

/** The SQL with every string literal blanked: what is left is what the builder wrote itself. */
function withoutLiterals(sql: string): string {
  return sql.replace(/'(?:\\.|[^'\\])*'/g, "''");
}

describe('buildClickHouseQuery', () => {
  it('writes every value as a literal of the one encoder, whatever it holds', () => {
    const sql = build({
      scope: { publisherIds: [HOSTILE] },
      filters: [{ dimension: 'country', operator: 'not equals', values: [HOSTILE, "O'Brien"] }],
    });
    expect(sql).toContain(`publisher_id IN (${stringLiteral(HOSTILE)})`);
    expect(sql).toContain(
      `toString(country) NOT IN (${stringLiteral(HOSTILE)}, ${stringLiteral("O'Brien")})`,
    );
    expect(withoutLiterals(sql)).not.toMatch(/DROP|Brien/);
    expect(sql).not.toContain('\n');
  });

  it('bounds the range with Date literals, and refuses anything but a day', () => {
    expect(build()).toContain("day >= toDate('2026-11-01') AND day <= toDate('2026-11-30')");
    expect(() => build({ range: { start: "2026-11-01') OR (1", end: '2026-11-30' } })).toThrow(/not a day/);
  });

  it('reads the tier the query names', () => {
    expect(build()).toContain('FROM exact_daily ');
    expect(build({ tier: 'inexact' })).toContain('FROM inexact_sample ');
  });

  it('sums every measure and counts the rows', () => {
    const sql = build();
    for (const measure of MEASURE_NAMES) {
      expect(sql).toContain(`sum(${measure}) AS ${measure}`);
    }
    expect(sql).toContain('count() AS n FROM');
    expect(sql).not.toContain('GROUP BY');
  });

  it.each([
    ['campaign_id', 'campaign_id AS k'],
    ['day', 'toString(day) AS k'],
    ['year', 'toUInt16(toYear(day)) AS k'],
    ['month', 'toUInt8(toMonth(day)) AS k'],
    ['hour', 'hour AS k'],
    [
      'day_hour',
      "concat(toString(day), ' ', if(hour < 10, concat('0', toString(hour)), toString(hour))) AS k",
    ],
    ['segmented_values', 'segment_value AS k'],
  ])('groups by %s as %s', (split, key) => {
    const sql = build({ split });
    expect(sql).toContain(key);
    expect(sql).toMatch(/ GROUP BY k$/);
  });

  it('matches nothing for an empty scope or an empty equals filter, and ignores an empty not-equals', () => {
    expect(build({ scope: { advertiserIds: [] } })).toMatch(/WHERE .* AND 0$/);
    expect(build({ filters: [{ dimension: 'zip', operator: 'equals', values: [] }] })).toMatch(/ AND 0$/);
    expect(build({ filters: [{ dimension: 'zip', operator: 'not equals', values: [] }] })).not.toContain(
      'zip',
    );
  });

  it('compares dimensions as text, integer ones included', () => {
    const sql = build({
      tier: 'inexact',
      filters: [{ dimension: 'month', operator: 'equals', values: ['7'] }],
    });
    expect(sql).toContain("toString(toUInt8(toMonth(day))) IN ('7')");
  });

  it('refuses a dimension outside the split catalog instead of writing it into SQL', () => {
    expect(() => build({ split: 'k; DROP TABLE x' })).toThrow(/not a dimension/);
    expect(() => build({ filters: [{ dimension: 'x OR 1', operator: 'equals', values: ['a'] }] })).toThrow(
      /not a dimension/,
    );
  });

  it('orders in SQL by each term in turn, ranks through transform() over literal arrays', () => {
    const sql = build({
      split: 'campaign_id',
      order: [
        { by: 'metric', metric: 'ctr', direction: 'desc' },
        {
          by: 'rank',
          ranks: new Map([
            [HOSTILE, 0],
            ['c-b', 1],
          ]),
          direction: 'asc',
        },
        { by: 'rank', ranks: new Map(), direction: 'desc' },
        { by: 'key', direction: 'asc' },
      ],
    });
    expect(sql).toMatch(
      /^SELECT .* FROM \(SELECT campaign_id AS k, .*\) ORDER BY .*DESC, .*ASC, .*DESC, .*ASC$/,
    );
    expect(sql).toContain(`transform(toString(k), [${stringLiteral(HOSTILE)}, 'c-b'], [0, 1], 2)`);
    expect(withoutLiterals(sql)).not.toContain('DROP');
  });

  it('ignores an order without a split: one row needs none', () => {
    expect(build({ order: [{ by: 'key', direction: 'desc' }] })).not.toContain('ORDER BY');
  });
});
