import { describe, expect, it, vi } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { Random } from '@app/demo-traffic';
import {
  addMeasures,
  emptyMeasures,
  findMetric,
  roundDecimal,
  type Measures,
  type StoreRow,
} from '@app/report-model';
import { missingRank, type StoreOrderTerm } from '@app/report-store';
import {
  StreamedReport,
  TOTALS_LABEL,
  attributeRanks,
  recordOf,
  storeOrder,
  sumOf,
  totalsOf,
  type CellValue,
  type ReportRecord,
} from './report-builder';
import type { ReportPlan, SortRule } from './report-planner';

const catalog = loadCatalog();

function planOf(overrides: Partial<ReportPlan>): ReportPlan {
  return {
    type: 'advertiser',
    variant: 'full',
    range: { start: '2026-11-01', end: '2026-11-20' },
    split: 'campaign_id',
    columns: ['impressions', 'clicks'],
    removedColumns: [],
    filters: [],
    sort: [],
    scope: {},
    tier: 'exact',
    ...overrides,
  };
}

function measures(m: Partial<Measures>): Measures {
  return { ...emptyMeasures(), ...m };
}

/** The order the builder had before the store sorted: records compared field by field. */
function compare(a: CellValue, b: CellValue): number {
  if (a === b) {
    return 0;
  }
  if (a === null) {
    return 1;
  }
  if (b === null) {
    return -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

function sortedTheOldWay(records: ReportRecord[], rules: readonly SortRule[], split: string): ReportRecord[] {
  const all = rules.some((r) => r.key === split) ? rules : [...rules, { key: split, direction: 'asc' }];
  return [...records].sort((a, b) => {
    for (const rule of all) {
      const order = compare(a[rule.key], b[rule.key]);
      if (order !== 0) {
        return rule.direction === 'asc' ? order : -order;
      }
    }
    return 0;
  });
}

/** What the stores' ORDER BY does with the terms (the contract suite holds the stores to it). */
function sortedByTerms(rows: readonly StoreRow[], terms: readonly StoreOrderTerm[]): StoreRow[] {
  const valueOf = (term: StoreOrderTerm, row: StoreRow): string | number => {
    switch (term.by) {
      case 'key':
        return row.key!;
      case 'metric': {
        const metric = findMetric(term.metric)!;
        const value = metric.compute(row.measures);
        return metric.dataType === 'decimal' ? roundDecimal(value) : value;
      }
      case 'rank':
        return term.ranks.get(String(row.key)) ?? missingRank(term.ranks);
    }
  };
  return [...rows].sort((a, b) => {
    for (const term of terms) {
      const order = compare(valueOf(term, a), valueOf(term, b));
      if (order !== 0) {
        return term.direction === 'asc' ? order : -order;
      }
    }
    return 0;
  });
}

async function* rowsOf(rows: readonly StoreRow[]): AsyncGenerator<StoreRow> {
  for (const row of rows) {
    yield row;
  }
}

async function streamed(
  plan: ReportPlan,
  rows: readonly StoreRow[],
  upfrontSums?: Measures,
): Promise<StreamedReport> {
  const rest = rowsOf(rows);
  const first = await rest.next();
  return new StreamedReport(plan, catalog, { first, rest, upfrontSums, abandonAfterMs: 60_000 });
}

async function collect(report: StreamedReport): Promise<ReportRecord[]> {
  const out: ReportRecord[] = [];
  for await (const record of report.records) {
    out.push(record);
  }
  return out;
}

describe('storeOrder: the sort rules as the store sorts', () => {
  it('sorts by the split value ascending by default, and nothing without a split', () => {
    expect(storeOrder(planOf({}), catalog)).toEqual([{ by: 'key', direction: 'asc' }]);
    expect(
      storeOrder(planOf({ split: undefined, sort: [{ key: 'clicks', direction: 'desc' }] }), catalog),
    ).toEqual([]);
  });

  it('turns metric rules into metric terms and ends with the split value', () => {
    const plan = planOf({
      sort: [
        { key: 'clicks', direction: 'desc' },
        { key: 'impressions', direction: 'asc' },
      ],
    });
    expect(storeOrder(plan, catalog)).toEqual([
      { by: 'metric', metric: 'clicks', direction: 'desc' },
      { by: 'metric', metric: 'impressions', direction: 'asc' },
      { by: 'key', direction: 'asc' },
    ]);
  });

  it('stops at a rule on the split value, which is unique', () => {
    const plan = planOf({
      sort: [
        { key: 'campaign_id', direction: 'desc' },
        { key: 'clicks', direction: 'desc' },
      ],
    });
    expect(storeOrder(plan, catalog)).toEqual([{ by: 'key', direction: 'desc' }]);
  });

  it('ranks a meaningful attribute and leaves out one that is null for the split', () => {
    const plan = planOf({
      columns: ['campaign_name', 'strategy_name', 'clicks'],
      sort: [
        { key: 'strategy_name', direction: 'asc' },
        { key: 'campaign_name', direction: 'desc' },
      ],
    });
    const terms = storeOrder(plan, catalog);
    expect(terms.map((t) => t.by)).toEqual(['rank', 'key']);
    expect(terms[0]).toMatchObject({ by: 'rank', direction: 'desc' });
  });
});

describe('attributeRanks', () => {
  it('ranks the catalog values by the attribute, equal values sharing a rank', () => {
    const ranks = attributeRanks(catalog, 'campaign_id', 'campaign_type');
    expect([...ranks.keys()].sort()).toEqual([...catalog.campaigns.keys()].sort());
    const typeOf = (id: string) => catalog.campaigns.get(id)!.campaignType;
    for (const [a, ra] of ranks) {
      for (const [b, rb] of ranks) {
        expect(Math.sign(ra - rb), `${a} ${b}`).toBe(compare(typeOf(a), typeOf(b)));
      }
    }
  });

  it('leaves out split values without the attribute, and splits without attributes', () => {
    expect(attributeRanks(catalog, 'campaign_id', 'strategy_name').size).toBe(0);
    expect(attributeRanks(catalog, 'zip', 'campaign_name').size).toBe(0);
  });
});

describe('sorting in the store gives the records the builder used to sort', () => {
  const random = new Random(11);
  const split = 'campaign_id';
  const keys = [...catalog.campaigns.keys(), 'unknown-1', 'unknown-2', 'Ünïcode', 'UNKNOWN'];
  const columns = [
    'campaign_name',
    'advertiser_name',
    'campaign_type',
    'impressions',
    'clicks',
    'ctr',
    'spend',
    'gross_cpm',
  ];
  for (let round = 0; round < 40; round += 1) {
    it(`round ${round}`, () => {
      // Few distinct values, so that ties (and the rounding of decimals) decide orders.
      const rows: StoreRow[] = keys.map((key) => ({
        key,
        measures: measures({
          unique_impressions: random.int(5) * 1000,
          reopens: random.int(3),
          clicks: random.int(4),
          spend_micros: random.int(4) * 1_000_000,
        }),
      }));
      const sortable = [...columns, split];
      const rules: SortRule[] = [];
      for (let i = random.int(4); i > 0; i -= 1) {
        const key = random.pick(sortable);
        if (!rules.some((r) => r.key === key)) {
          rules.push({ key, direction: random.int(2) ? 'asc' : 'desc' });
        }
      }
      const plan = planOf({ columns, sort: rules });
      const expected = sortedTheOldWay(
        rows.map((row) => recordOf(plan, row, catalog)),
        rules,
        split,
      );
      const actual = sortedByTerms(rows, storeOrder(plan, catalog)).map((row) =>
        recordOf(plan, row, catalog),
      );
      expect(actual, JSON.stringify(rules)).toEqual(expected);
    });
  }
});

describe('StreamedReport', () => {
  const plan = planOf({ columns: ['campaign_name', 'impressions', 'clicks', 'ctr', 'spend'] });
  const rows: StoreRow[] = [
    {
      key: 'cmp-1-1-1',
      measures: measures({ unique_impressions: 300, reopens: 100, clicks: 7, spend_micros: 1_500_000 }),
    },
    { key: 'cmp-x', measures: measures({ unique_impressions: 3, clicks: 1, spend_micros: 10 }) },
  ];

  it('builds each record on its way through and sums the totals in passing', async () => {
    const report = await streamed(plan, rows);
    expect(report.fields).toEqual(['campaign_id', 'campaign_name', 'impressions', 'clicks', 'ctr', 'spend']);
    expect([...report.numericFields].sort()).toEqual(['clicks', 'ctr', 'impressions', 'spend']);
    expect(report.empty).toBe(false);
    const records = await collect(report);
    expect(records).toEqual(rows.map((row) => recordOf(plan, row, catalog)));
    expect(records[0].campaign_name).toBe(catalog.campaigns.get('cmp-1-1-1')!.name);
    expect(records[1].campaign_name).toBeNull();
    expect(report.totals).toEqual({
      campaign_id: TOTALS_LABEL,
      campaign_name: null,
      impressions: 403,
      clicks: 8,
      ctr: roundDecimal((8 / 403) * 100),
      spend: roundDecimal(1_500_010 / 1e6),
    });
    expect(report.totals).toEqual(totalsOf(plan, sumOf(rows)));
  });

  it('uses sums computed up front and does not add the rows to them', async () => {
    const upfront = addMeasures(sumOf(rows), emptyMeasures());
    const report = await streamed(plan, rows, upfront);
    const before = report.totals;
    await collect(report);
    expect(report.totals).toEqual(before);
    expect(report.totals).toEqual(totalsOf(plan, sumOf(rows)));
  });

  it('is empty when the stream has no row, with zero totals', async () => {
    const report = await streamed(plan, []);
    expect(report.empty).toBe(true);
    expect(await collect(report)).toEqual([]);
    expect(report.totals).toMatchObject({ campaign_id: TOTALS_LABEL, impressions: 0, ctr: 0 });
  });

  it('can be read once', async () => {
    const report = await streamed(plan, rows);
    await collect(report);
    await expect(collect(report)).rejects.toThrow(/once/);
  });

  it('cancels the store stream when the reader leaves early', async () => {
    const rest = rowsOf(rows);
    const first = await rest.next();
    const returned = vi.spyOn(rest, 'return');
    const report = new StreamedReport(plan, catalog, { first, rest, abandonAfterMs: 60_000 });
    for await (const record of report.records) {
      expect(record.campaign_id).toBe('cmp-1-1-1');
      break;
    }
    expect(returned).toHaveBeenCalled();
  });

  it('gives the store stream back when nobody reads the records', async () => {
    vi.useFakeTimers();
    try {
      const rest = rowsOf(rows);
      const first = await rest.next();
      const returned = vi.spyOn(rest, 'return');
      new StreamedReport(plan, catalog, { first, rest, abandonAfterMs: 1_000 });
      await vi.advanceTimersByTimeAsync(999);
      expect(returned).not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(1);
      expect(returned).toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});
