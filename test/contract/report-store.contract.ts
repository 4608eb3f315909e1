import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  METRICS,
  SPLITS,
  emptyMeasures,
  findMetric,
  roundDecimal,
  type Measures,
  type StoreQuery,
  type StoreRow,
} from '@app/report-model';
import type { AdEvent } from '@app/events';
import {
  ReportStoreErrorCode,
  type OffsetEvent,
  type ReportStore,
  type StoreOrderTerm,
  type StoreStreamQuery,
} from '@app/report-store';
import { demoEvents, expectedBySplit, makeEvent, splitValueOf } from '@app/testing';

const RANGE = { start: '2026-01-01', end: '2026-11-21' };
/** Every day of RANGE is closed at this instant. */
const SEAL_NOW = new Date('2026-11-22T00:00:05.000Z');

function withOffsets(events: readonly AdEvent[], first: number): OffsetEvent[] {
  return events.map((event, i) => ({ offset: String(first + i), event }));
}

/** Row order is not part of the contract: the reporting app sorts. */
function byKey(rows: readonly StoreRow[]): StoreRow[] {
  return [...rows].sort((a, b) => String(a.key).localeCompare(String(b.key)));
}

function query(overrides: Partial<StoreStreamQuery>): StoreStreamQuery {
  return { range: RANGE, filters: [], scope: {}, tier: 'exact', ...overrides };
}

async function collect(rows: AsyncIterable<StoreRow>): Promise<StoreRow[]> {
  const out: StoreRow[] = [];
  for await (const row of rows) {
    out.push(row);
  }
  return out;
}

/** A metric as the API shows it, decimals rounded to 4 places: what a metric term sorts by. */
function shown(metric: string, row: StoreRow): number {
  const definition = findMetric(metric)!;
  const value = definition.compute(row.measures);
  return definition.dataType === 'decimal' ? roundDecimal(value) : value;
}

/** The reporting app's comparison (numbers by value, text by code unit), term after term. */
function sortedInJs(rows: readonly StoreRow[], order: readonly StoreOrderTerm[]): StoreRow[] {
  const valueOf = (term: StoreOrderTerm, row: StoreRow): number | string => {
    switch (term.by) {
      case 'key':
        return row.key!;
      case 'metric':
        return shown(term.metric, row);
      case 'rank':
        return term.ranks.get(String(row.key)) ?? Number.MAX_SAFE_INTEGER;
    }
  };
  return [...rows].sort((a, b) => {
    for (const term of order) {
      const [x, y] = [valueOf(term, a), valueOf(term, b)];
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : x < y ? -1 : x > y ? 1 : 0;
      if (c !== 0) {
        return term.direction === 'asc' ? c : -c;
      }
    }
    return 0;
  });
}

/** What a sampled cell's error depends on: its true sums, and over its impressions the money's squares. */
interface CellTruth {
  readonly measures: Measures;
  /** Over the cell's impressions (the sampled events): count, money and money squared, in USD. */
  readonly impressions: number;
  readonly spend: number;
  readonly spendSquares: number;
  readonly revenue: number;
  readonly revenueSquares: number;
}

/** The true sums of each cell of a split, with what the sample's variance needs. */
function cellTruths(events: readonly AdEvent[], split: string): Map<string, CellTruth> {
  const cells = new Map<string, CellTruth>();
  for (const [key, measures] of expectedBySplit(events, split)) {
    cells.set(String(key), {
      measures,
      impressions: 0,
      spend: 0,
      spendSquares: 0,
      revenue: 0,
      revenueSquares: 0,
    });
  }
  for (const e of events.filter((e) => e.type === 'impression')) {
    const cell = cells.get(String(splitValueOf(e, split)))!;
    const [spend, revenue] = [e.spend_micros / 1e6, e.revenue_micros / 1e6];
    cells.set(String(splitValueOf(e, split)), {
      ...cell,
      impressions: cell.impressions + 1,
      spend: cell.spend + spend,
      spendSquares: cell.spendSquares + spend * spend,
      revenue: cell.revenue + revenue,
      revenueSquares: cell.revenueSquares + revenue * revenue,
    });
  }
  return cells;
}

/**
 * The standard deviation of each estimate of the inexact tier for one cell, as docs/exactness.md#error-bound
 * derives it: a sampled sum N × Σ x_i over 1-in-N impressions has variance (N−1) Σ x_i²; a ratio R over the
 * sampled impressions, to first order, (N−1) Σ (x_i − R)² / I²; a ratio over exact clicks or conversions, the
 * numerator's variance over the denominator squared. Clicks, conversions and ccr are exact: 0.
 */
function sigmasOf(cell: CellTruth, n: number): Record<string, number> {
  const m = cell.measures;
  const impressions = m.unique_impressions + m.reopens;
  const spend = Math.sqrt((n - 1) * cell.spendSquares);
  const revenue = Math.sqrt((n - 1) * cell.revenueSquares);
  /** x_i is the impression's share of the numerator (0 for clicks), R the true ratio, per impression. */
  const overImpressions = (ratio: number, sum: number, squares: number) =>
    impressions === 0
      ? 0
      : Math.sqrt((n - 1) * Math.max(0, squares - 2 * ratio * sum + impressions * ratio * ratio)) /
        impressions;
  const acquisitions = m.conversions + m.post_view_conversions;
  const value = (metric: string) => findMetric(metric)!.compute(m);
  return {
    impressions: Math.sqrt((n - 1) * impressions),
    unique_impressions: Math.sqrt((n - 1) * m.unique_impressions),
    reopens: Math.sqrt((n - 1) * m.reopens),
    clicks: 0,
    conversions: 0,
    post_view_conversions: 0,
    ccr: 0,
    spend,
    revenue,
    ctr: overImpressions(value('ctr') / 100, 0, 0) * 100,
    gross_cpm: overImpressions(value('gross_cpm') / 1000, cell.spend, cell.spendSquares) * 1000,
    net_cpm: overImpressions(value('net_cpm') / 1000, cell.revenue, cell.revenueSquares) * 1000,
    gross_cpc: m.clicks === 0 ? 0 : spend / m.clicks,
    net_cpc: m.clicks === 0 ? 0 : revenue / m.clicks,
    gross_cpa: acquisitions === 0 ? 0 : spend / acquisitions,
    net_cpa: acquisitions === 0 ? 0 : revenue / acquisitions,
  };
}

/** The ratios whose denominator, impressions, is sampled: their deviation is first-order. */
const OVER_IMPRESSIONS = new Set(['ctr', 'gross_cpm', 'net_cpm']);

/** The splits of the inexact tier: inexact for every user, or for advertiser-only ones. */
const INEXACT_SPLITS = SPLITS.filter((s) => s.exactness === 'inexact' || s.variantExactness === 'inexact');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * When an event that arrives for a day already sealed (a late event: a delayed conversion, a
 * spool replayed after an outage) shows in the inexact tier's reports. Each store states its own:
 * - `at once`: DuckDB writes the sample in the ingest's transaction, and seals nothing.
 * - `at the next seal`: ClickHouse answers the days up to its newest sealed day from the rollup's
 *   monthly copy (`inexact_monthly`), which the sealer copies again when it reseals a changed day;
 *   until then those reports leave the late event out. Queries read from the sample (two
 *   dimensions at once) show it at once; the exact tier shows it at once on both stores.
 */
export type LateEventShows = 'at once' | 'at the next seal';

/**
 * What every report store must do. `create` returns an empty store with its schema applied and
 * the inexact tier sampling 1 impression in `sampleDenominator`.
 */
export function reportStoreContract(
  name: string,
  create: () => Promise<ReportStore>,
  sampleDenominator: number,
  options: {
    /** When a late event on a sealed day shows in the inexact tier (see `LateEventShows`). */
    lateEventOnSealedDay: LateEventShows;
    /**
     * A second store over the data of the one `create` returned last, answering every inexact query
     * from the sample: the store's other paths (ClickHouse's rollup) must return the same rows.
     */
    sampleTwin?: () => Promise<ReportStore>;
  },
): void {
  describe(`report store contract: ${name}`, () => {
    let store: ReportStore;
    let twin: ReportStore | undefined;
    const events = demoEvents(5, 4000);
    const days = events.map((e) => e.ts.slice(0, 10)).sort();
    /** The demo events' days: the tests that add events add them on other days. */
    const demoRange = { start: days[0], end: days[days.length - 1] };

    beforeAll(async () => {
      store = await create();
      expect(await store.isEmpty()).toBe(true);
      for (let i = 0; i < events.length; i += 2500) {
        const result = await store.ingest('contract/0', withOffsets(events.slice(i, i + 2500), i));
        expect(result).toEqual({ stored: Math.min(2500, events.length - i), skipped: 0 });
      }
      await store.seal(SEAL_NOW);
      twin = await options.sampleTwin?.();
      // 8 inserts and a seal of 5 days in every tier: 1 to 7 s here, more on a busy machine.
    }, 60_000);
    afterAll(async () => {
      await store?.close();
      await twin?.close();
    });

    it('is no longer empty', async () => {
      expect(await store.isEmpty()).toBe(false);
    });

    for (const split of SPLITS.filter((s) => s.exactness === 'exact')) {
      it(`answers the exact split ${split.name} to the unit`, async () => {
        const rows = await store.query(query({ split: split.name }));
        const expected = expectedBySplit(events, split.name);
        expect(rows).toHaveLength(expected.size);
        for (const row of rows) {
          expect(row.measures).toEqual(expected.get(row.key!));
        }
      });
    }

    it('leaves out a redelivered batch without changing any number', async () => {
      const before = await store.query(query({}));
      const replay = await store.ingest('contract/0', withOffsets(events.slice(0, 2500), 0));
      expect(replay).toEqual({ stored: 0, skipped: 2500 });
      expect(await store.query(query({}))).toEqual(before);
    });

    it('stores only the new events of a redelivery with other batch boundaries', async () => {
      const extra = [1, 2, 3].map((i) => makeEvent({ type: 'click', ts: `2026-11-0${i}T08:00:00.000Z` }));
      const source = 'contract/boundaries';
      expect(await store.ingest(source, withOffsets(extra.slice(0, 2), 100))).toEqual({
        stored: 2,
        skipped: 0,
      });
      const [before] = await store.query(query({}));
      expect(await store.ingest(source, withOffsets(extra, 100))).toEqual({ stored: 1, skipped: 2 });
      const [after] = await store.query(query({}));
      expect(after.measures.clicks - before.measures.clicks).toBe(1);
      const other = makeEvent({ type: 'click', ts: '2026-11-04T08:00:00.000Z' });
      expect(await store.ingest('contract/other-source', withOffsets([other], 100))).toEqual({
        stored: 1,
        skipped: 0,
      });
    });

    it('counts an event id delivered twice under other offsets once, once closed days are sealed', async () => {
      const twice = makeEvent({ type: 'click', ts: '2026-11-06T08:00:00.000Z', spend_micros: 1_250_000 });
      // The earlier tests' late events in the inexact tier first (\`LateEventShows\`).
      await store.seal(SEAL_NOW);
      const [before] = await store.query(query({}));
      const [inexactBefore] = await store.query(query({ tier: 'inexact' }));
      // A producer retry whose first try landed: the same event again, at a later offset of its
      // partition, and (after a repartitioning) in another partition.
      await store.ingest('contract/retried', withOffsets([twice], 0));
      await store.ingest('contract/retried', withOffsets([makeEvent({ type: 'click' }), twice], 1));
      await store.ingest('contract/retried-elsewhere', withOffsets([twice], 0));
      await store.seal(SEAL_NOW);
      const [after] = await store.query(query({}));
      expect(after.measures.clicks - before.measures.clicks).toBe(2);
      expect(after.measures.spend_micros - before.measures.spend_micros).toBe(1_250_000);
      // The inexact tier too: every click is in the sample with weight 1, so its change is exact.
      const [inexactAfter] = await store.query(query({ tier: 'inexact' }));
      expect(inexactAfter.measures.clicks - inexactBefore.measures.clicks).toBe(2);
      expect(inexactAfter.measures.spend_micros - inexactBefore.measures.spend_micros).toBe(1_250_000);
      expect(inexactAfter.measures.clicks).toBe(after.measures.clicks);
    });

    it('changes no number by sealing again, and comes to rest', async () => {
      const splits = ['day', 'campaign_id', 'publisher_id'];
      const before = await Promise.all(
        splits.map(async (split) => byKey(await store.query(query({ split })))),
      );
      // A background merge that drops a duplicate lowers a day's raw count once: a pass or two more.
      let passes = 0;
      while ((await store.seal(SEAL_NOW)).sealed.length > 0 && passes < 5) {
        passes += 1;
      }
      expect(passes).toBeLessThan(5);
      const after = await Promise.all(
        splits.map(async (split) => byKey(await store.query(query({ split })))),
      );
      expect(after).toEqual(before);
    });

    it('keeps the inexact tier within its error bound and clicks exact', async () => {
      const [exact] = await store.query(query({}));
      const [inexact] = await store.query(query({ tier: 'inexact' }));
      const n = exact.measures.unique_impressions;
      const sigma = Math.sqrt(n * (sampleDenominator - 1));
      expect(Math.abs(inexact.measures.unique_impressions - n)).toBeLessThanOrEqual(4 * sigma);
      expect(inexact.measures.clicks).toBe(exact.measures.clicks);
      expect(inexact.measures.conversions).toBe(exact.measures.conversions);
    });

    it('keeps every estimate of every inexact split within 4 standard deviations, per cell', async () => {
      let cellsChecked = 0;
      let ratiosChecked = 0;
      for (const split of INEXACT_SPLITS) {
        const truths = cellTruths(events, split.name);
        const rows = await store.query(query({ split: split.name, tier: 'inexact', range: demoRange }));
        const estimates = new Map(rows.map((r) => [String(r.key), r.measures]));
        expect(
          [...estimates.keys()].filter((k) => !truths.has(k)),
          split.name,
        ).toEqual([]);
        // A cell none of whose impressions was sampled (and with no click) has no row: estimated 0.
        for (const [key, truth] of truths) {
          const estimated = estimates.get(key) ?? emptyMeasures();
          const sigmas = sigmasOf(truth, sampleDenominator);
          const impressions = truth.measures.unique_impressions + truth.measures.reopens;
          // The deviations of ratios over impressions are first-order: held to them where the
          // sampled denominator's relative error, sqrt((N-1)/I), is at most 10 %.
          const firstOrder = (sampleDenominator - 1) / impressions <= 0.01;
          for (const metric of METRICS) {
            if (OVER_IMPRESSIONS.has(metric.name) && !firstOrder) {
              continue;
            }
            const estimate = metric.compute(estimated);
            const truthValue = metric.compute(truth.measures);
            // Floating-point slack on money and ratios, none on counts.
            const slack = metric.dataType === 'decimal' ? 1e-9 : 0;
            expect(
              Math.abs(estimate - truthValue),
              `${split.name}=${key} ${metric.name}: ${estimate} for ${truthValue}`,
            ).toBeLessThanOrEqual(4 * sigmas[metric.name] + slack);
            ratiosChecked += OVER_IMPRESSIONS.has(metric.name) ? 1 : 0;
          }
          cellsChecked += 1;
        }
      }
      // Not vacuous: 332 cells, and the 3 ratios over impressions of the 116 with 900 impressions or more.
      expect(cellsChecked).toBeGreaterThan(300);
      expect(ratiosChecked).toBeGreaterThan(300);
    });

    describe.runIf(options.sampleTwin)('the same inexact rows by every path', () => {
      const compare = async (q: StoreQuery, what: string) => {
        const rows = byKey(await store.query(q));
        expect(rows, what).toEqual(byKey(await twin!.query(q)));
        return rows;
      };

      it('answers every inexact split, alone, scoped, filtered and as totals, with the rows of the sample', async () => {
        for (const split of INEXACT_SPLITS) {
          const base = query({ split: split.name, tier: 'inexact' });
          const rows = await compare(base, split.name);
          expect(rows.length, split.name).toBeGreaterThan(0);
          const keys = rows.map((r) => String(r.key));
          const variants: [string, Partial<StoreQuery>][] = [
            ['advertisers', { scope: { advertiserIds: ['adv-1', 'adv-3'] } }],
            ['publisher', { scope: { publisherIds: ['pub-1'] } }],
            [
              'equals',
              { filters: [{ dimension: split.name, operator: 'equals', values: keys.slice(0, 2) }] },
            ],
            [
              'not equals',
              { filters: [{ dimension: split.name, operator: 'not equals', values: keys.slice(0, 1) }] },
            ],
            [
              'hours',
              { filters: [{ dimension: 'hour', operator: 'not equals', values: ['3', '07', '24'] }] },
            ],
            [
              'dates',
              {
                filters: [
                  { dimension: 'month', operator: 'equals', values: ['11'] },
                  { dimension: 'day', operator: 'not equals', values: [demoRange.start] },
                ],
              },
            ],
            [
              'split by advertiser',
              {
                split: 'advertiser_id',
                filters: [{ dimension: split.name, operator: 'equals', values: keys.slice(0, 3) }],
              },
            ],
            [
              'totals',
              {
                split: undefined,
                filters: [{ dimension: split.name, operator: 'equals', values: keys.slice(-2) }],
              },
            ],
          ];
          for (const [what, overrides] of variants) {
            await compare({ ...base, ...overrides }, `${split.name} ${what}`);
          }
        }
        const [totals] = await compare(query({ tier: 'inexact' }), 'totals');
        expect(totals.measures.clicks).toBeGreaterThan(0);
      });

      it('answers a day alike from the views, and once it is sealed', async () => {
        // After every sealed day: ClickHouse reads the days up to its newest sealed one from the
        // rollup's monthly copy, which takes a late event at the next seal, not from the views.
        const day = '2026-11-22';
        const dayAfter = new Date('2026-11-23T00:00:05.000Z');
        const late = events.slice(0, 3000).map((e, i) => ({
          ...e,
          event_id: `late-${i}`,
          ts: `${day}${e.ts.slice(10)}`,
        }));
        await store.ingest('contract/late', withOffsets(late, 0));
        const onDay = (split: string) => query({ split, tier: 'inexact', range: { start: day, end: day } });
        const viewed = [];
        for (const split of INEXACT_SPLITS) {
          viewed.push(await compare(onDay(split.name), `${split.name} from the views`));
        }
        expect(viewed[0].length).toBeGreaterThan(0);
        expect((await store.seal(dayAfter)).sealed).toContain(day);
        for (const [i, split] of INEXACT_SPLITS.entries()) {
          expect(await compare(onDay(split.name), `${split.name} sealed`)).toEqual(viewed[i]);
        }
      });
    });

    it('answers every inexact split with totals close to the exact ones: impressions and money within 4 sigma, clicks and conversions equal', async () => {
      const [exact] = await store.query(query({}));
      const [inexact] = await store.query(query({ tier: 'inexact' }));
      // Only the demo events' impressions are sampled (the other tests add clicks, or events after
      // RANGE): the sums' deviations are those of a 1-in-N sample of them.
      const impressions = events.filter((e) => e.type === 'impression');
      const squares = (field: 'spend_micros' | 'revenue_micros') =>
        impressions.reduce((sum, e) => sum + e[field] * e[field], 0);
      const n = sampleDenominator;
      const sigma: Partial<Record<keyof Measures, number>> = {
        unique_impressions: Math.sqrt((n - 1) * exact.measures.unique_impressions),
        reopens: Math.sqrt((n - 1) * exact.measures.reopens),
        spend_micros: Math.sqrt((n - 1) * squares('spend_micros')),
        revenue_micros: Math.sqrt((n - 1) * squares('revenue_micros')),
      };
      let checked = 0;
      for (const split of SPLITS.filter((s) => s.exactness === 'inexact')) {
        const rows = await store.query(query({ split: split.name, tier: 'inexact' }));
        const totals = emptyMeasures();
        for (const row of rows) {
          for (const measure of Object.keys(totals) as (keyof Measures)[]) {
            totals[measure] += row.measures[measure];
          }
        }
        // Every sampled event has one value of the split: the rows add up to the tier's totals.
        for (const measure of Object.keys(totals) as (keyof Measures)[]) {
          expect(totals[measure], `${split.name} ${measure}`).toBeCloseTo(inexact.measures[measure], 3);
        }
        for (const measure of ['clicks', 'conversions', 'post_view_conversions'] as const) {
          expect(totals[measure], `${split.name} ${measure}`).toBe(exact.measures[measure]);
        }
        for (const [measure, deviation] of Object.entries(sigma) as [keyof Measures, number][]) {
          expect(
            Math.abs(totals[measure] - exact.measures[measure]),
            `${split.name} ${measure}: ${totals[measure]} for ${exact.measures[measure]}`,
          ).toBeLessThanOrEqual(4 * deviation);
          // Not vacuous: the bound is a fraction of the total (an unweighted sample is 90 % off).
          expect(4 * deviation, measure).toBeLessThan(0.2 * exact.measures[measure]);
        }
        const expectedKeys = new Set(
          events.filter((e) => e.type === 'click').map((e) => String(expectedBySplitKey(e, split.name))),
        );
        for (const key of expectedKeys) {
          expect(rows.map((r) => String(r.key))).toContain(key);
        }
        checked += 1;
      }
      expect(checked).toBeGreaterThan(5);
    });

    it('filters with equals and not equals, combined with AND', async () => {
      const all = await store.query(query({ split: 'publisher_id' }));
      const only = await store.query(
        query({
          split: 'publisher_id',
          filters: [{ dimension: 'publisher_id', operator: 'equals', values: ['pub-2'] }],
        }),
      );
      expect(only).toEqual(all.filter((r) => r.key === 'pub-2'));
      const not = await store.query(
        query({
          split: 'publisher_id',
          filters: [
            { dimension: 'publisher_id', operator: 'not equals', values: ['pub-2'] },
            { dimension: 'year', operator: 'equals', values: ['2026'] },
          ],
        }),
      );
      expect(byKey(not)).toEqual(byKey(all.filter((r) => r.key !== 'pub-2')));
    });

    it('restricts every query to the account scope', async () => {
      const rows = await store.query(
        query({ split: 'advertiser_id', scope: { advertiserIds: ['adv-1', 'adv-3'] } }),
      );
      expect(rows.map((r) => r.key).sort()).toEqual(['adv-1', 'adv-3']);
      const none = await store.query(query({ split: 'advertiser_id', scope: { advertiserIds: [] } }));
      expect(none).toEqual([]);
    });

    it('treats quotes, backslashes, SQL and unicode as plain data', async () => {
      const nasty = [
        "O'Brien",
        'back\\slash',
        "'; DROP TABLE exact_daily; --",
        '"double"',
        'ünï€ødé',
        'nul\u0000byte',
        'tab\there',
        'new\nline\r\n',
        '\\t not a tab',
        '🙂\u2028',
      ];
      const batch = nasty.map((value, i) =>
        makeEvent({
          ts: '2026-10-10T08:00:00.000Z',
          list_id: value,
          campaign_id: value,
          event_id: `nasty-${i}`,
          type: 'click',
        }),
      );
      expect((await store.ingest('contract/nasty', withOffsets(batch, 0))).stored).toBe(batch.length);
      // A day before the newest sealed one: in ClickHouse's inexact tier at the next seal
      // (`LateEventShows`; the ingest seals every second).
      await store.seal(SEAL_NOW);
      for (const value of nasty) {
        const exact = await store.query(
          query({
            split: 'campaign_id',
            filters: [{ dimension: 'campaign_id', operator: 'equals', values: [value] }],
          }),
        );
        expect(exact.map((r) => r.key)).toEqual([value]);
        const inexact = await store.query(
          query({
            split: 'list_id',
            tier: 'inexact',
            filters: [{ dimension: 'list_id', operator: 'equals', values: [value] }],
          }),
        );
        expect(inexact.map((r) => [r.key, r.measures.clicks])).toEqual([[value, 1]]);
      }
      expect((await store.query(query({ split: 'campaign_id' }))).length).toBeGreaterThan(nasty.length);
    });

    describe('streaming read', () => {
      it('streams the same rows, keys and measures as query, for every split', async () => {
        for (const split of [undefined, ...SPLITS.map((s) => s.name)]) {
          const q = query({ split, tier: SPLITS.find((s) => s.name === split)?.exactness ?? 'exact' });
          expect(byKey(await collect(store.stream(q))), String(split)).toEqual(byKey(await store.query(q)));
        }
      });

      it('runs nothing until the first next(), runs anew on each iteration, and ends at return()', async () => {
        // A store of its own, so that the events stored here change no other test's data.
        const own = await create();
        try {
          const day = (ts: string) => ts.slice(0, 10);
          const [first, second, third] = ['2026-09-14', '2026-09-15', '2026-09-16'].map((d) =>
            makeEvent({ type: 'click', ts: `${d}T08:00:00.000Z` }),
          );
          await own.ingest('contract/lazy', withOffsets([first], 0));
          const rows = own.stream(query({ split: 'day' }));
          const iterator = rows[Symbol.asyncIterator]();
          // Stored after the stream was made and before it was read: a store that ran the query
          // early would leave this day out.
          await own.ingest('contract/lazy', withOffsets([second], 1));
          const read: StoreRow[] = [];
          for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
            read.push(next.value);
          }
          expect(read.map((r) => r.key)).toEqual([day(first.ts), day(second.ts)]);
          await own.ingest('contract/lazy', withOffsets([third], 2));
          expect(byKey(await collect(rows)).map((r) => r.key)).toEqual(
            [first, second, third].map((e) => day(e.ts)),
          );

          const leaving = rows[Symbol.asyncIterator]();
          expect((await leaving.next()).done).toBe(false);
          await leaving.return?.();
          expect((await leaving.next()).done).toBe(true);
        } finally {
          await own.close();
        }
      });

      it('sorts in SQL by the split value, integers by value, text by code point', async () => {
        for (const [split, tier] of [
          ['day', 'exact'],
          ['campaign_id', 'exact'],
          ['hour', 'inexact'],
          ['zip', 'inexact'],
          ['list_id', 'inexact'],
        ] as const) {
          for (const direction of ['asc', 'desc'] as const) {
            const order: StoreOrderTerm[] = [{ by: 'key', direction }];
            const rows = await collect(store.stream(query({ split, tier, order })));
            expect(rows.length, split).toBeGreaterThan(1);
            expect(rows, `${split} ${direction}`).toEqual(sortedInJs(rows, order));
          }
        }
      });

      it('sorts by every metric as the API shows it (rounded), the split value breaking ties', async () => {
        const split = 'zip';
        const all = await store.query(query({ split, tier: 'inexact' }));
        for (const metric of METRICS) {
          for (const direction of ['asc', 'desc'] as const) {
            const order: StoreOrderTerm[] = [
              { by: 'metric', metric: metric.name, direction },
              { by: 'key', direction: 'asc' },
            ];
            const rows = await collect(store.stream(query({ split, tier: 'inexact', order })));
            expect(rows, `${metric.name} ${direction}`).toEqual(sortedInJs(all, order));
          }
        }
        // Rows share click counts, so the tie-breaker is exercised.
        expect(new Set(all.map((r) => r.measures.clicks)).size).toBeLessThan(all.length);
      });

      it('sorts by several metric terms in turn', async () => {
        const order: StoreOrderTerm[] = [
          { by: 'metric', metric: 'clicks', direction: 'desc' },
          { by: 'metric', metric: 'ctr', direction: 'asc' },
          { by: 'key', direction: 'desc' },
        ];
        const all = await store.query(query({ split: 'day' }));
        expect(await collect(store.stream(query({ split: 'day', order })))).toEqual(sortedInJs(all, order));
      });

      it('sorts by ranks it is given, values without a rank after every ranked one', async () => {
        const all = await store.query(query({ split: 'publisher_id' }));
        const keys = all.map((r) => String(r.key)).sort();
        expect(keys.length).toBeGreaterThan(2);
        // Reverse order, the first two sharing a rank, the last one unranked.
        const ranks = new Map(
          keys
            .slice(0, -1)
            .reverse()
            .map((k, i) => [k, Math.max(0, i - 1)]),
        );
        ranks.set("O'Brien \\ 🙂", 0);
        for (const direction of ['asc', 'desc'] as const) {
          const order: StoreOrderTerm[] = [
            { by: 'rank', ranks, direction },
            { by: 'key', direction: 'asc' },
          ];
          const rows = await collect(store.stream(query({ split: 'publisher_id', order })));
          expect(rows).toEqual(sortedInJs(all, order));
          const last = keys[keys.length - 1];
          expect(rows[direction === 'asc' ? rows.length - 1 : 0].key).toBe(last);
        }
        const none: StoreOrderTerm[] = [
          { by: 'rank', ranks: new Map(), direction: 'asc' },
          { by: 'key', direction: 'desc' },
        ];
        expect(await collect(store.stream(query({ split: 'publisher_id', order: none })))).toEqual(
          sortedInJs(all, none),
        );
      });

      it('orders query() the same way when given an order', async () => {
        const order: StoreOrderTerm[] = [
          { by: 'metric', metric: 'spend', direction: 'desc' },
          { by: 'key', direction: 'asc' },
        ];
        const rows = await store.query(query({ split: 'campaign_id', order }));
        expect(rows.map((r) => r.key)).toEqual(
          (await collect(store.stream(query({ split: 'campaign_id', order })))).map((r) => r.key),
        );
      });

      it('fails a streamed query that outlives its timeout with STORE_TIMEOUT on the first next()', async () => {
        const filters = Array.from({ length: 50 }, (_, f) => ({
          dimension: 'zip',
          operator: 'not equals' as const,
          values: Array.from({ length: 1000 }, (_, v) => `${f}-${v}`),
        }));
        const rows = store.stream(query({ split: 'zip', tier: 'inexact', filters, timeoutMs: 1 }));
        await expect(rows[Symbol.asyncIterator]().next()).rejects.toMatchObject({
          code: ReportStoreErrorCode.Timeout,
        });
      });

      it('does not count the time the consumer holds a row against the timeout', async () => {
        const q = query({ split: 'day', timeoutMs: 1_500 });
        const rows: StoreRow[] = [];
        for await (const row of store.stream(q)) {
          if (rows.length < 3) {
            await sleep(700);
          }
          rows.push(row);
        }
        expect(byKey(rows)).toEqual(byKey(await store.query(q)));
      });

      it('answers alike after consumers left 40 streams early, more than ClickHouse has connections', async () => {
        // What this shows: leaving early ends the iteration cleanly and leaves the store whole. It
        // cannot show that the connection was freed: these results fit in the sockets' buffers,
        // so a store that leaks them passes too (docs/testing.md, "Mutations checked").
        const order: StoreOrderTerm[] = [{ by: 'key', direction: 'asc' }];
        const q = query({ split: 'zip', tier: 'inexact', order });
        const all = await store.query(q);
        expect(all.length).toBeGreaterThan(1);
        for (let i = 0; i < 40; i += 1) {
          for await (const row of store.stream(q)) {
            expect(row).toEqual(all[0]);
            break;
          }
        }
        expect(await store.query(q)).toEqual(all);
      });
    });

    it('fails a query that outlives its timeout with STORE_TIMEOUT', async () => {
      const filters = Array.from({ length: 50 }, (_, f) => ({
        dimension: 'zip',
        operator: 'not equals' as const,
        values: Array.from({ length: 1000 }, (_, v) => `${f}-${v}`),
      }));
      await expect(
        store.query(query({ split: 'zip', tier: 'inexact', filters, timeoutMs: 1 })),
      ).rejects.toMatchObject({
        code: ReportStoreErrorCode.Timeout,
      });
      expect(await store.query(query({ split: 'zip', tier: 'inexact', filters }))).not.toHaveLength(0);
    });

    it('answers concurrent queries independently', async () => {
      const shapes = ['day', 'campaign_id', 'country', 'hour'].map((split) =>
        query({ split, tier: split === 'country' || split === 'hour' ? 'inexact' : 'exact' }),
      );
      const serial = [];
      for (const q of shapes) {
        serial.push(byKey(await store.query(q)));
      }
      expect((await Promise.all(shapes.map((q) => store.query(q)))).map(byKey)).toEqual(serial);
    });

    it(`shows a late event on a sealed day in the exact tier at once, in the inexact tier ${options.lateEventOnSealedDay}`, async () => {
      // A store of its own (its inexact tier stays whole for the other tests), and a day inside
      // RANGE sealed with one click before the late one comes.
      const own = await create();
      const ownTwin = await options.sampleTwin?.();
      try {
        const day = '2026-10-20';
        const listId = 'late-on-a-sealed-day';
        const campaignId = 'cmp-late-on-a-sealed-day';
        // Each tier by a dimension it holds: ClickHouse answers the inexact one from its rollup.
        const onDay = (tier: 'exact' | 'inexact', from: ReportStore = own) => {
          const dimension = tier === 'exact' ? 'campaign_id' : 'list_id';
          const value = tier === 'exact' ? campaignId : listId;
          return from
            .query(
              query({
                tier,
                split: dimension,
                range: { start: day, end: day },
                filters: [{ dimension, operator: 'equals', values: [value] }],
              }),
            )
            .then((rows) => rows.map((r) => [r.key, r.measures.clicks]));
        };
        const click = (hour: string) =>
          makeEvent({
            type: 'click',
            ts: `${day}T${hour}:00:00.000Z`,
            list_id: listId,
            campaign_id: campaignId,
          });
        await own.ingest('contract/late-on-sealed', withOffsets([click('08')], 0));
        const sealed = await own.seal(SEAL_NOW);
        if (options.lateEventOnSealedDay === 'at the next seal') {
          expect(sealed.sealed).toContain(day);
        }
        expect(await onDay('exact')).toEqual([[campaignId, 1]]);
        expect(await onDay('inexact')).toEqual([[listId, 1]]);

        await own.ingest('contract/late-on-sealed', withOffsets([click('15')], 1));
        expect(await onDay('exact')).toEqual([[campaignId, 2]]);
        const shownAtOnce = options.lateEventOnSealedDay === 'at once';
        expect(await onDay('inexact')).toEqual([[listId, shownAtOnce ? 2 : 1]]);
        if (ownTwin) {
          // The sample has it: only the rollup's copy waits for the seal.
          expect(await onDay('inexact', ownTwin)).toEqual([[listId, 2]]);
        }

        const resealed = await own.seal(SEAL_NOW);
        if (!shownAtOnce) {
          expect(resealed.sealed).toContain(day);
        }
        expect(await onDay('exact')).toEqual([[campaignId, 2]]);
        expect(await onDay('inexact')).toEqual([[listId, 2]]);
      } finally {
        await ownTwin?.close();
        await own.close();
      }
    });

    it('returns no rows for an empty range and no-split totals otherwise', async () => {
      expect(
        await store.query(query({ range: { start: '2020-01-01', end: '2020-01-31' }, split: 'day' })),
      ).toEqual([]);
      const rows = await store.query(query({}));
      expect(rows).toHaveLength(1);
      expect(rows[0].key).toBeUndefined();
    });
  });
}

/** A closed store refuses work as unavailable, for the API's 701. */
export function closedStoreContract(name: string, create: () => Promise<ReportStore>): void {
  it(`${name}: a closed store is unavailable`, async () => {
    const store = await create();
    await store.close();
    await expect(store.query(query({}))).rejects.toMatchObject({ code: ReportStoreErrorCode.Unavailable });
    const rows = store.stream(query({ split: 'day' }))[Symbol.asyncIterator]();
    await expect(rows.next()).rejects.toMatchObject({ code: ReportStoreErrorCode.Unavailable });
    await expect(store.ingest('closed/0/0', [])).rejects.toMatchObject({
      code: ReportStoreErrorCode.Unavailable,
    });
  });
}

function expectedBySplitKey(
  event: Parameters<typeof expectedBySplit>[0][number],
  split: string,
): string | number {
  return [...expectedBySplit([event], split).keys()][0];
}

/**
 * Retention drops the raw material of days older than the retention (ClickHouse's raw events,
 * DuckDB's deduplication ids) and keeps the tiers; a sealed day is not resealed to nothing.
 */
export function retentionContract(
  name: string,
  create: (retentionMonths: number) => Promise<ReportStore>,
): void {
  it(`${name}: retention drops days before the first of the month N months back, keeps the reports`, async () => {
    const store = await create(3);
    try {
      const old = makeEvent({ type: 'click', ts: '2026-07-31T23:00:00.000Z' });
      const kept = makeEvent({ type: 'click', ts: '2026-08-01T01:00:00.000Z' });
      await store.ingest('retention/0', withOffsets([old, kept], 0));
      const now = new Date('2026-11-22T12:00:00.000Z');
      await store.seal(now);
      const before = byKey(await store.query(query({ split: 'day' })));
      expect(before.map((r) => [r.key, r.measures.clicks])).toEqual([
        ['2026-07-31', 1],
        ['2026-08-01', 1],
      ]);
      expect(await store.dropExpired(now)).toEqual(['2026-07-31']);
      expect(await store.dropExpired(now)).toEqual([]);
      await store.seal(now);
      expect(byKey(await store.query(query({ split: 'day' })))).toEqual(before);
    } finally {
      await store.close();
    }
  });
}
