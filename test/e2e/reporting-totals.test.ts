import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { ReportCode, roundDecimal } from '@app/report-model';
import { FIXED_NOW, demoEvents, startBackgroundIngest } from '@app/testing';
import { modes, publishEvents, startReporting, USERS, type RunningReporting } from './reporting-system';

/**
 * A report agrees with itself whatever is written meanwhile (issue 22): its totals record is the
 * sum of its rows, on top or at the bottom, exact and inexact, while an ingest keeps adding
 * yesterday's traffic on every store. The ratios of the totals are recomputed from the summed
 * counts, and a decimal of money differs from the sum of the rows' rounded values by their
 * rounding at most.
 */
const REQUESTS_PER_SHAPE = Number(process.env.TOTALS_REQUESTS_PER_SHAPE ?? 25);

type Row = Record<string, string | number | null>;
type User = keyof typeof USERS;

interface Shape {
  readonly name: string;
  readonly user: User;
  readonly body: Record<string, unknown>;
  readonly split?: string;
  readonly totals: 'top' | 'bottom';
}

const SHAPES: readonly Shape[] = [
  {
    name: "issue 22's advertiser report (exact, totals on top, sorted by conversions)",
    user: 'adv',
    split: 'demand_type',
    totals: 'top',
    body: {
      type: 'advertiser',
      startDate: '1 fortnight ago',
      endDate: 'yesterday',
      splits: ['demand_type'],
      columns: ['clicks', 'conversions', 'publisher_id', 'demand_type'],
      sort: { conversions: 'desc' },
      format: { columnTotals: 'top' },
    },
  },
  {
    name: 'a publisher report by day with ratios and money (exact, totals on top)',
    user: 'pub',
    split: 'day',
    totals: 'top',
    body: {
      type: 'publisher',
      startDate: '-7 days',
      endDate: 'yesterday',
      splits: ['day'],
      columns: ['impressions', 'clicks', 'ctr', 'revenue', 'net_cpm', 'reopens'],
      format: { columnTotals: 'top' },
    },
  },
  {
    name: 'a publisher report by country (inexact tier, totals on top)',
    user: 'pub',
    split: 'country',
    totals: 'top',
    body: {
      type: 'publisher',
      startDate: '-3 days',
      endDate: 'yesterday',
      splits: ['country'],
      columns: ['impressions', 'clicks', 'ctr', 'unique_impressions'],
      sort: { clicks: 'desc' },
      format: { columnTotals: 'top' },
    },
  },
  {
    name: 'an advertiser report by hour (inexact tier, totals at the bottom)',
    user: 'adv',
    split: 'hour',
    totals: 'bottom',
    body: {
      type: 'advertiser',
      startDate: 'yesterday',
      endDate: 'yesterday',
      splits: ['hour'],
      columns: ['impressions', 'clicks', 'conversions', 'spend', 'ctr'],
      format: { columnTotals: 'bottom' },
    },
  },
  {
    name: 'an advertiser report by campaign (exact, totals on top, filtered)',
    user: 'adv',
    split: 'campaign_id',
    totals: 'top',
    body: {
      type: 'advertiser',
      startDate: '-2 days',
      endDate: 'yesterday',
      splits: ['campaign_id'],
      columns: ['impressions', 'clicks', 'spend', 'gross_cpm', 'ccr', 'conversions'],
      filters: [{ dimension: 'demand_type', operator: 'not equals', values: ['none'] }],
      format: { columnTotals: 'top' },
    },
  },
];

const COUNTS = ['impressions', 'unique_impressions', 'reopens', 'clicks', 'conversions'];
const MONEY = ['revenue', 'spend'];

/** What is wrong with a report's totals record against its rows. */
function disagreements(shape: Shape, records: readonly Row[]): string[] {
  const split = shape.split!;
  const totals = shape.totals === 'top' ? records[0] : records[records.length - 1];
  const rows = shape.totals === 'top' ? records.slice(1) : records.slice(0, -1);
  if (totals?.[split] !== '(totals)') {
    return [`no totals record ${shape.totals}: ${JSON.stringify(totals)}`];
  }
  const problems: string[] = [];
  const sum = (column: string) => rows.reduce((acc, row) => acc + Number(row[column]), 0);
  for (const column of Object.keys(totals)) {
    if (COUNTS.includes(column) && totals[column] !== sum(column)) {
      problems.push(`${column}: totals ${totals[column]}, rows ${sum(column)}`);
    }
    // Each row's money is rounded to 4 places from exact micros; the totals round the exact sum once.
    if (
      MONEY.includes(column) &&
      Math.abs(Number(totals[column]) - sum(column)) > rows.length * 0.00005 + 1e-9
    ) {
      problems.push(`${column}: totals ${totals[column]}, rows ${sum(column)}`);
    }
  }
  if ('ctr' in totals && 'impressions' in totals) {
    const impressions = sum('impressions');
    const ctr = impressions === 0 ? 0 : roundDecimal((sum('clicks') * 100) / impressions);
    if (totals.ctr !== ctr) {
      problems.push(`ctr: totals ${totals.ctr}, from the rows' sums ${ctr}`);
    }
  }
  return problems;
}

for (const mode of modes()) {
  describe(`reporting API: totals against rows while an ingest runs [${mode}]`, () => {
    const catalog = loadCatalog();
    let api: RunningReporting;
    let now = FIXED_NOW.getTime();

    beforeAll(async () => {
      // The clock moves a second per request, so that signed seeds stay in the window.
      api = await startReporting(mode, {}, () => new Date(now));
      await publishEvents(api.system, demoEvents(14, 300));
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it(
      `answers ${REQUESTS_PER_SHAPE} requests of each of ${SHAPES.length} shapes with totals equal to the rows' sums`,
      { timeout: 300_000 },
      async () => {
        // Yesterday's traffic published on the bus every 50 ms without waiting for it to be stored:
        // the ingest writes while the reports read.
        const ingest = startBackgroundIngest(api.system.bus, catalog, FIXED_NOW);
        const failures: string[] = [];
        const seenTotals = SHAPES.map(() => new Set<string>());
        try {
          for (let i = 0; i < REQUESTS_PER_SHAPE; i += 1) {
            for (const [s, shape] of SHAPES.entries()) {
              now += 1000;
              const response = await api.client.json(USERS[shape.user], shape.body, {
                accept: 'application/json',
              });
              if (
                response.code !== Number(ReportCode.Ok) &&
                response.code !== Number(ReportCode.DimensionsRemoved)
              ) {
                failures.push(`${shape.name} #${i}: code ${response.code} ${response.text.slice(0, 200)}`);
                continue;
              }
              const records = response.json<Row[]>();
              seenTotals[s].add(JSON.stringify(records[shape.totals === 'top' ? 0 : records.length - 1]));
              for (const problem of disagreements(shape, records)) {
                failures.push(`${shape.name} #${i} (after ${ingest.batches} batches): ${problem}`);
              }
            }
          }
        } finally {
          await ingest.stop();
        }
        console.log(
          `totals [${mode}]: ${REQUESTS_PER_SHAPE * SHAPES.length} reports, ${ingest.batches} batches published meanwhile, ` +
            `distinct totals per shape ${seenTotals.map((s) => s.size).join(', ')}`,
        );
        expect(failures.slice(0, 10), `${failures.length} reports disagree with themselves`).toEqual([]);
        // The data did change under the requests: each shape saw different totals (the inexact ones
        // on ClickHouse change less often: yesterday is read from the monthly copy, rebuilt at each seal).
        expect(ingest.batches).toBeGreaterThan(10);
        for (const [s, shape] of SHAPES.entries()) {
          expect(seenTotals[s].size, shape.name).toBeGreaterThan(1);
        }
      },
    );
  });
}
