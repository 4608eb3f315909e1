import { describe, expect, it } from 'vitest';
import { MEASURE_NAMES, SPLITS, type StoreQuery } from '@app/report-model';
import type { StoreStreamQuery } from '../report-store.port';
import { buildClickHouseQuery, monthlySide, rollupDimensionFor } from './clickhouse-query.builder';
import { stringLiteral } from './clickhouse-literal';
import { ROLLUP_DIMENSIONS } from './inexact-rollup';

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
    expect(sql).toContain(`country NOT IN (${stringLiteral(HOSTILE)}, ${stringLiteral("O'Brien")})`);
    expect(withoutLiterals(sql)).not.toMatch(/DROP|Brien/);
    expect(sql).not.toContain('\n');
  });

  it('bounds the range with Date literals, and refuses anything but a day', () => {
    expect(build()).toContain("day >= toDate('2026-11-01') AND day <= toDate('2026-11-30')");
    expect(() => build({ range: { start: "2026-11-01') OR (1", end: '2026-11-30' } })).toThrow(/not a day/);
  });

  it('reads the tier the query names', () => {
    expect(build()).toContain('FROM exact_daily ');
    expect(build({ tier: 'inexact', split: 'campaign_id' })).toContain('FROM inexact_sample ');
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

  it('compares String columns bare, so that the primary key applies', () => {
    const sql = build({
      filters: [
        { dimension: 'campaign_id', operator: 'equals', values: ['c-1', 'c-2'] },
        { dimension: 'year_month', operator: 'not equals', values: ['2026 07'] },
      ],
    });
    expect(sql).toContain("campaign_id IN ('c-1', 'c-2')");
    expect(sql).toContain("AND concat(substring(toString(toYYYYMM(day)), 1, 4), ' ', substring(");
    expect(sql).not.toMatch(/toString\(campaign_id\)/);
  });

  it('compares year, month and hour as integers, in decimal or digit-string form', () => {
    const sql = build({
      tier: 'inexact',
      split: 'campaign_id',
      filters: [
        { dimension: 'year', operator: 'equals', values: ['2026', '02027'] },
        { dimension: 'month', operator: 'equals', values: ['7'] },
        { dimension: 'hour', operator: 'not equals', values: ['07', '23'] },
      ],
    });
    expect(sql).toContain('toUInt16(toYear(day)) IN (2026, 2027)');
    expect(sql).toContain('toUInt8(toMonth(day)) IN (7)');
    expect(sql).toContain('hour NOT IN (7, 23)');
  });

  it('compares the day as a Date', () => {
    const sql = build({
      filters: [{ dimension: 'day', operator: 'equals', values: ['2026-11-02', '2024-02-29'] }],
    });
    expect(sql).toContain("day IN (toDate('2026-11-02'), toDate('2024-02-29'))");
  });

  it.each([
    ['hour', ['-1', '256', '7.5', 'seven', '', '99999999999999999999']],
    ['month', ['256', '1e1', ' 7']],
    ['year', ['65536', '-2026', '2026-01']],
    [
      'day',
      [
        '2026-02-29',
        '2026-13-01',
        '2026-04-31',
        '1969-12-31',
        '2106-01-01',
        '2026-1-1',
        "2026-11-02') OR (1",
      ],
    ],
  ])('matches nothing for %s values that are not of its type, rather than failing', (dimension, values) => {
    const equals = build({ filters: [{ dimension, operator: 'equals', values }] });
    expect(equals).toMatch(/ AND 0$/);
    expect(withoutLiterals(equals)).not.toContain('OR (1');
    const notEquals = build({ filters: [{ dimension, operator: 'not equals', values }] });
    expect(notEquals).not.toContain('NOT IN');
    const valid = dimension === 'day' ? '2026-11-02' : '7';
    const mixed = build({ filters: [{ dimension, operator: 'equals', values: [...values, valid] }] });
    expect(mixed).toMatch(new RegExp(` IN \\((toDate\\('${valid}'\\)|${valid})\\)$`));
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

  describe('the inexact rollup', () => {
    const ROLLUP_SPLITS = SPLITS.filter(
      (s) => s.exactness === 'inexact' || s.variantExactness === 'inexact',
    ).map((s) => s.name);

    it('answers a split on each of its dimensions, the other inexact splits included', () => {
      for (const split of ROLLUP_SPLITS) {
        const sql = build({ tier: 'inexact', split });
        expect(sql, split).toContain('FROM inexact_daily ');
        expect(sql, split).toMatch(/ AND dimension = '[a-z_]+' /);
      }
    });

    it.each([
      ['country', 'country', 'value AS k'],
      ['segmented_keys', 'segment_key', 'value AS k'],
      ['publisher_domain', 'publisher_domain', 'value AS k'],
      ['hour', 'hour', 'toUInt8(value) AS k'],
      ['day_hour', 'hour', "concat(toString(day), ' ', value) AS k"],
    ])('reads %s from the values of %s as %s', (split, dimension, key) => {
      const sql = build({ tier: 'inexact', split });
      expect(sql).toContain(`dimension = '${dimension}'`);
      expect(sql).toContain(key);
    });

    it('keeps the scope, the range, the sealed-day marker and filters on the same dimension or the day', () => {
      const sql = build({
        tier: 'inexact',
        split: 'country',
        scope: { advertiserIds: ['adv-1'] },
        filters: [
          { dimension: 'country', operator: 'not equals', values: ['US'] },
          { dimension: 'day', operator: 'equals', values: ['2026-11-03'] },
          { dimension: 'month', operator: 'equals', values: ['11'] },
        ],
      });
      expect(sql).toBe(
        `SELECT value AS k, ${MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ')}, count() AS n FROM inexact_daily ` +
          "WHERE day >= toDate('2026-11-01') AND day <= toDate('2026-11-30') AND dimension = 'country' " +
          "AND advertiser_id IN ('adv-1') AND value NOT IN ('US') AND day IN (toDate('2026-11-03')) " +
          'AND toUInt8(toMonth(day)) IN (11) GROUP BY k',
      );
    });

    describe('with the monthly copy', () => {
      const rollup = (monthlyThrough: string | undefined, overrides: Partial<StoreQuery> = {}) =>
        buildClickHouseQuery(
          { ...QUERY, tier: 'inexact', split: 'country', ...overrides },
          { monthlyThrough },
        );
      const sums = MEASURE_NAMES.map((m) => `sum(${m}) AS ${m}`).join(', ');

      it('reads a range the copy holds whole from the copy alone', () => {
        for (const through of ['2026-11-30', '2026-12-15']) {
          const sql = rollup(through);
          expect(sql).toContain('FROM inexact_monthly ');
          expect(sql).not.toContain('inexact_daily');
          expect(sql).not.toContain('UNION');
        }
      });

      it('reads the rollup alone when the copy ends before the range, or is not known', () => {
        for (const through of [undefined, '2026-10-31']) {
          const sql = rollup(through);
          expect(sql).toContain('FROM inexact_daily ');
          expect(sql).not.toContain('inexact_monthly');
        }
      });

      it('reads each day of a range the copy ends in from one table, and sums the two parts', () => {
        const where =
          "day >= toDate('2026-11-01') AND day <= toDate('2026-11-30') AND dimension = 'country' " +
          "AND publisher_id IN ('pub-1', 'pub-2')";
        expect(rollup('2026-11-20')).toBe(
          `SELECT k, ${sums}, sum(n) AS n FROM (` +
            `SELECT value AS k, ${sums}, count() AS n FROM inexact_monthly WHERE ${where} AND side = 'publisher' AND day <= toDate('2026-11-20') GROUP BY k` +
            ' UNION ALL ' +
            `SELECT value AS k, ${sums}, count() AS n FROM inexact_daily WHERE ${where} AND day > toDate('2026-11-20') GROUP BY k` +
            ') GROUP BY k',
        );
        const totals = rollup('2026-11-20', { split: undefined });
        expect(totals).toMatch(/^SELECT sum\(unique_impressions\)/);
        expect(totals).toContain(') ');
        expect(totals).not.toContain('GROUP BY');
      });

      it.each([
        ['publishers', { scope: { publisherIds: ['pub-1'] } }, 'publisher'],
        ['advertisers', { scope: { advertiserIds: ['adv-1'] } }, 'advertiser'],
        ['no account', { scope: {} }, 'advertiser'],
        ['both account columns', { scope: { publisherIds: ['pub-1'], advertiserIds: ['adv-1'] } }, ''],
        [
          'advertisers split by publisher',
          { scope: { advertiserIds: ['adv-1'] }, split: 'publisher_id' },
          '',
        ],
        [
          'publishers filtered on an advertiser',
          {
            scope: { publisherIds: ['pub-1'] },
            filters: [{ dimension: 'advertiser_id', operator: 'equals', values: ['adv-1'] }],
          },
          '',
        ],
        [
          'advertisers split by advertiser',
          { scope: { advertiserIds: ['adv-1'] }, split: 'advertiser_id' },
          'advertiser',
        ],
      ] as const)('reads the side of the copy a query scoped by %s names', (_, overrides, side) => {
        const q = { ...QUERY, tier: 'inexact' as const, split: 'country', ...overrides };
        expect(monthlySide(q)).toBe(side);
        expect(buildClickHouseQuery(q, { monthlyThrough: '2026-11-30' })).toContain(`side = '${side}'`);
      });

      it('leaves the sample and the exact tier where they were', () => {
        expect(
          rollup('2026-11-30', {
            split: 'country',
            filters: [{ dimension: 'zip', operator: 'equals', values: ['1'] }],
          }),
        ).toContain('FROM inexact_sample ');
        expect(rollup('2026-11-30', { tier: 'exact', split: 'campaign_id' })).toContain('FROM exact_daily ');
      });
    });

    it('compares an hour filter as the zero-padded text it stores', () => {
      expect(
        build({
          tier: 'inexact',
          split: 'day_hour',
          filters: [{ dimension: 'hour', operator: 'equals', values: ['7'] }],
        }),
      ).toContain("dimension = 'hour' AND publisher_id IN ('pub-1', 'pub-2') AND value IN ('07')");
    });

    it.each([
      [
        'a split on the account columns with a filter on one dimension',
        { split: 'advertiser_id', filters: [{ dimension: 'zip', operator: 'equals', values: ['10001'] }] },
        'zip',
      ],
      [
        'totals filtered on one dimension',
        { filters: [{ dimension: 'os', operator: 'equals', values: ['iOS'] }] },
        'os',
      ],
      ['totals without a filter, from hour (at most 24 values a day)', {}, 'hour'],
      [
        'hour and day_hour, one dimension',
        {
          split: 'hour',
          filters: [{ dimension: 'day_hour', operator: 'equals', values: ['2026-11-03 07'] }],
        },
        'hour',
      ],
    ] as const)('routes %s to the rollup', (_, overrides, dimension) => {
      expect(rollupDimensionFor({ ...QUERY, tier: 'inexact', ...overrides })).toBe(dimension);
    });

    it.each([
      ['an exact query', { tier: 'exact', split: 'country' }],
      [
        'a split the rollup has no values of',
        { split: 'campaign_id', filters: [{ dimension: 'country', operator: 'equals', values: ['US'] }] },
      ],
      [
        'a filter on a second dimension',
        { split: 'country', filters: [{ dimension: 'os', operator: 'equals', values: ['iOS'] }] },
      ],
      [
        'a filter on an exact dimension',
        { split: 'country', filters: [{ dimension: 'campaign_id', operator: 'equals', values: ['c'] }] },
      ],
    ] as const)('leaves %s to its tier', (_, overrides) => {
      const q: StoreQuery = { ...QUERY, tier: 'inexact', ...overrides };
      expect(rollupDimensionFor(q)).toBeUndefined();
      expect(buildClickHouseQuery(q)).not.toContain('inexact_daily');
    });

    it('reads the sample when told to, to compare the two paths', () => {
      expect(
        buildClickHouseQuery({ ...QUERY, tier: 'inexact', split: 'country' }, { inexactRollup: false }),
      ).toContain('country AS k, ');
      expect(
        buildClickHouseQuery({ ...QUERY, tier: 'inexact', split: 'country' }, { inexactRollup: false }),
      ).toContain('FROM inexact_sample ');
    });

    it('has the dimension of every inexact split', () => {
      expect(ROLLUP_DIMENSIONS).toEqual([
        'publisher_domain',
        'advertiser_domain',
        'hour',
        'age',
        'gender',
        'country',
        'region',
        'metro',
        'zip',
        'device_maker',
        'device_model',
        'device_type',
        'os',
        'browser',
        'placement_id',
        'list_id',
        'segment_key',
        'segment_value',
        'email_domain',
      ]);
    });
  });

  it('ignores an order without a split: one row needs none', () => {
    expect(build({ order: [{ by: 'key', direction: 'desc' }] })).not.toContain('ORDER BY');
  });
});
