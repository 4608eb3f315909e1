import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEASURE_NAMES, type StoreQuery } from '@app/report-model';
import { EXACT_KEY_FIELDS, INEXACT_FIELDS } from '../event-rollup';
import type { StoreStreamQuery } from '../report-store.port';
import { buildDuckDbQuery } from './duckdb-query.builder';
import { DUCKDB_MIGRATIONS } from './duckdb.migrations';

const HOSTILE = "x'); DROP TABLE exact_daily; --";

const QUERY: StoreQuery = {
  range: { start: '2026-11-01', end: '2026-11-30' },
  filters: [],
  scope: { publisherIds: ['pub-1', 'pub-2'] },
  tier: 'exact',
};

function query(overrides: Partial<StoreStreamQuery> = {}): StoreStreamQuery {
  return { ...QUERY, ...overrides };
}

describe('buildDuckDbQuery: the SQL', () => {
  it('binds every value as a parameter, in order, and never writes one into the SQL', () => {
    const { sql, params } = buildDuckDbQuery(
      query({
        scope: { publisherIds: ['pub-1', HOSTILE] },
        filters: [{ dimension: 'country', operator: 'equals', values: [HOSTILE, 'US'] }],
      }),
    );
    expect(params).toEqual(['2026-11-01', '2026-11-30', 'pub-1', HOSTILE, HOSTILE, 'US']);
    for (const value of params) {
      expect(sql).not.toContain(value);
    }
    expect(sql).toContain('publisher_id IN ($3, $4)');
    expect(sql).toContain('CAST(country AS VARCHAR) IN ($5, $6)');
  });

  it('reads the tier the query names', () => {
    expect(buildDuckDbQuery(query()).sql).toContain('FROM exact_daily ');
    expect(buildDuckDbQuery(query({ tier: 'inexact' })).sql).toContain('FROM inexact_sample ');
  });

  it('groups by the split, as its derived expression where it has one', () => {
    expect(buildDuckDbQuery(query({ split: 'campaign_id' })).sql).toMatch(
      /^SELECT campaign_id AS k, .* GROUP BY k$/,
    );
    expect(buildDuckDbQuery(query({ split: 'day' })).sql).toContain("strftime(day, '%Y-%m-%d') AS k");
    expect(buildDuckDbQuery(query({ split: 'segmented_keys', tier: 'inexact' })).sql).toContain(
      'segment_key AS k',
    );
  });

  it('without a split, returns one row only when rows matched', () => {
    const { sql } = buildDuckDbQuery(query());
    expect(sql).not.toContain('GROUP BY');
    expect(sql).toMatch(/HAVING COUNT\(\*\) > 0$/);
  });

  it('sums every measure as an integer', () => {
    const { sql } = buildDuckDbQuery(query());
    for (const measure of MEASURE_NAMES) {
      expect(sql).toContain(`CAST(SUM(${measure}) AS BIGINT) AS ${measure}`);
    }
  });

  it('matches nothing for an empty scope or an empty equals filter, and ignores an empty not-equals', () => {
    expect(buildDuckDbQuery(query({ scope: { advertiserIds: [] } })).sql).toContain(' AND FALSE');
    const equals = buildDuckDbQuery(
      query({ filters: [{ dimension: 'zip', operator: 'equals', values: [] }] }),
    );
    expect(equals.sql).toContain(' AND FALSE HAVING');
    const notEquals = buildDuckDbQuery(
      query({ filters: [{ dimension: 'zip', operator: 'not equals', values: [] }] }),
    );
    expect(notEquals.sql).not.toContain('zip');
  });

  it('compares integer dimensions as text, the form filter values arrive in', () => {
    const { sql } = buildDuckDbQuery(
      query({ tier: 'inexact', filters: [{ dimension: 'hour', operator: 'not equals', values: ['7'] }] }),
    );
    expect(sql).toContain('CAST(CAST(hour AS INTEGER) AS VARCHAR) NOT IN ($5)');
  });

  it('refuses a dimension outside the split catalog instead of writing it into SQL', () => {
    expect(() => buildDuckDbQuery(query({ split: 'weather; DROP TABLE x' }))).toThrow(/not a dimension/);
    expect(() =>
      buildDuckDbQuery(query({ filters: [{ dimension: '1=1 OR x', operator: 'equals', values: ['a'] }] })),
    ).toThrow(/not a dimension/);
  });

  it('orders in SQL by each term in turn, rank values bound like every other value', () => {
    const { sql, params } = buildDuckDbQuery(
      query({
        split: 'campaign_id',
        order: [
          { by: 'metric', metric: 'clicks', direction: 'desc' },
          { by: 'rank', ranks: new Map([[HOSTILE, 0]]), direction: 'asc' },
          { by: 'key', direction: 'asc' },
        ],
      }),
    );
    expect(sql).toMatch(/ ORDER BY .*DESC, .*ASC, .*ASC$/);
    expect(sql).toContain('LEFT JOIN (VALUES ($5, 0))');
    expect(params[4]).toBe(HOSTILE);
    expect(sql).not.toContain(HOSTILE);
  });

  it('ignores an order without a split: one row needs none', () => {
    const { sql } = buildDuckDbQuery(query({ order: [{ by: 'key', direction: 'asc' }] }));
    expect(sql).not.toContain('ORDER BY');
  });
});

describe('buildDuckDbQuery: run on DuckDB', () => {
  let instance: DuckDBInstance;
  let db: DuckDBConnection;

  const measures = (clicks: number, unique: number) =>
    Object.fromEntries(
      MEASURE_NAMES.map((m) => [m, m === 'clicks' ? clicks : m === 'unique_impressions' ? unique : 0]),
    );

  async function insert(table: string, row: Record<string, string | number>): Promise<void> {
    const names = Object.keys(row);
    await db.run(
      `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      Object.values(row),
    );
  }

  async function rows(q: StoreStreamQuery): Promise<unknown[][]> {
    const { sql, params } = buildDuckDbQuery(q);
    const reader = await db.runAndReadAll(sql, params);
    return reader.getRows().map((row) => row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
  }

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    db = await instance.connect();
    for (const migration of DUCKDB_MIGRATIONS) {
      for (const statement of migration.statements) {
        await db.run(statement);
      }
    }
    const keys = (publisher: string, campaign: string) =>
      Object.fromEntries(
        EXACT_KEY_FIELDS.map((f) => [
          f,
          f === 'publisher_id' ? publisher : f === 'campaign_id' ? campaign : 'x',
        ]),
      );
    await insert('exact_daily', { day: '2026-11-02', ...keys('pub-1', 'c-a'), ...measures(3, 100) });
    await insert('exact_daily', { day: '2026-11-03', ...keys('pub-1', 'c-b'), ...measures(5, 50) });
    await insert('exact_daily', { day: '2026-11-03', ...keys('pub-2', 'c-a'), ...measures(1, 10) });
    await insert('exact_daily', { day: '2026-11-03', ...keys('pub-9', 'c-a'), ...measures(100, 1000) });
    await insert('exact_daily', { day: '2026-12-01', ...keys('pub-1', 'c-a'), ...measures(7, 70) });
    const sample = Object.fromEntries(INEXACT_FIELDS.map((f) => [f, f === 'publisher_id' ? 'pub-1' : 'x']));
    await insert('inexact_sample', { day: '2026-11-02', hour: 7, ...sample, weight: 10, ...measures(2, 20) });
    await insert('inexact_sample', { day: '2026-11-02', hour: 9, ...sample, weight: 10, ...measures(4, 40) });
  });
  afterAll(() => {
    db?.closeSync();
    instance?.closeSync();
  });

  const clicksAt = MEASURE_NAMES.indexOf('clicks');

  it('sums the scope within the range, by split value', async () => {
    const result = await rows(query({ split: 'campaign_id', order: [{ by: 'key', direction: 'asc' }] }));
    expect(result.map((r) => [r[0], r[1 + clicksAt]])).toEqual([
      ['c-a', 4],
      ['c-b', 5],
    ]);
  });

  it('returns no row for no data, with or without a split', async () => {
    const empty = query({ range: { start: '2025-01-01', end: '2025-01-31' } });
    expect(await rows(empty)).toEqual([]);
    expect(await rows({ ...empty, split: 'day' })).toEqual([]);
  });

  it('treats a hostile filter value as data: it matches nothing and the tables stay', async () => {
    const filters = [{ dimension: 'campaign_id', operator: 'equals' as const, values: [HOSTILE] }];
    expect(await rows(query({ filters }))).toEqual([]);
    expect((await rows(query())).length).toBe(1);
  });

  it('filters integer dimensions by their decimal text', async () => {
    const result = await rows(
      query({
        tier: 'inexact',
        split: 'hour',
        filters: [{ dimension: 'hour', operator: 'not equals', values: ['7'] }],
      }),
    );
    expect(result.map((r) => [r[0], r[1 + clicksAt]])).toEqual([[9, 4]]);
  });

  it('sorts by a metric, then by rank, then by key', async () => {
    const byClicks = await rows(
      query({ split: 'campaign_id', order: [{ by: 'metric', metric: 'clicks', direction: 'desc' }] }),
    );
    expect(byClicks.map((r) => r[0])).toEqual(['c-b', 'c-a']);
    const byRank = await rows(
      query({
        split: 'campaign_id',
        order: [
          { by: 'rank', ranks: new Map([['c-a', 0]]), direction: 'desc' },
          { by: 'key', direction: 'asc' },
        ],
      }),
    );
    expect(byRank.map((r) => r[0])).toEqual(['c-b', 'c-a']);
  });
});
