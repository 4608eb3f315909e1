import { describe, expect, it } from 'vitest';
import { CatalogSource, loadCatalog } from '@app/catalog';
import { ReportCode, emptyMeasures, type Measures, type StoreRow } from '@app/report-model';
import {
  ReportStoreErrorCode,
  ReportStoreException,
  type ReportStore,
  type StoreStreamQuery,
} from '@app/report-store';
import type { AuthenticationService } from '../auth/authentication.service';
import type { RateLimiterService } from '../auth/rate-limiter.service';
import type { ReportingConfig } from '../reporting.config';
import { ReportingException } from '../reporting.exception';
import { TOTALS_LABEL, type ReportRecord } from './report-builder';
import { ReportService } from './report.service';

const catalog = loadCatalog();
const NOW = new Date('2026-11-22T10:30:00.000Z');
const user = catalog.users.get('demo-pub')!;
const auth = { user, account: catalog.accounts.get(user.accountId)! };

const BODY = {
  type: 'publisher',
  startDate: '2026-11-01',
  endDate: '2026-11-20',
  splits: ['day'],
  columns: ['impressions', 'clicks'],
};

function measures(m: Partial<Measures>): Measures {
  return { ...emptyMeasures(), ...m };
}

const ROWS: StoreRow[] = [
  { key: '2026-11-01', measures: measures({ unique_impressions: 10, clicks: 1 }) },
  { key: '2026-11-02', measures: measures({ unique_impressions: 20, reopens: 5, clicks: 2 }) },
];

/** A store whose stream serves rows (or fails) and records what it was asked. */
class FakeStore {
  readonly streamed: StoreStreamQuery[] = [];
  readonly queried: StoreStreamQuery[] = [];
  returned = false;
  pulled = 0;

  constructor(
    private readonly rows: readonly StoreRow[],
    private readonly failure?: ReportStoreException,
  ) {}

  stream(query: StoreStreamQuery): AsyncIterable<StoreRow> {
    this.streamed.push(query);
    const rows = query.split ? this.rows : [{ measures: sumOfRows(this.rows) }];
    const failure = this.failure;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const store = this;
    return {
      async *[Symbol.asyncIterator]() {
        try {
          if (failure) {
            throw failure;
          }
          for (const row of rows) {
            store.pulled += 1;
            yield row;
          }
        } finally {
          store.returned = true;
        }
      },
    };
  }

  query(query: StoreStreamQuery): Promise<StoreRow[]> {
    this.queried.push(query);
    return Promise.resolve(this.rows.length ? [{ measures: sumOfRows(this.rows) }] : []);
  }
}

function sumOfRows(rows: readonly StoreRow[]): Measures {
  const sum = emptyMeasures();
  for (const row of rows) {
    for (const [k, v] of Object.entries(row.measures)) {
      sum[k as keyof Measures] += v;
    }
  }
  return sum;
}

function serviceOn(store: FakeStore): ReportService {
  return new ReportService(
    { authenticate: () => Promise.resolve(auth) } as unknown as AuthenticationService,
    { consume: () => Promise.resolve() } as unknown as RateLimiterService,
    store as unknown as ReportStore,
    CatalogSource.of(catalog),
    { QUERY_TIMEOUT_MS: 1234 } as ReportingConfig,
  );
}

async function recordsOf(
  records: AsyncIterable<ReportRecord> | Iterable<ReportRecord>,
): Promise<ReportRecord[]> {
  const out: ReportRecord[] = [];
  for await (const record of records) {
    out.push(record);
  }
  return out;
}

describe('ReportService: a report ready to stream', () => {
  it('starts the sorted stream and reads its first row before answering', async () => {
    const store = new FakeStore(ROWS);
    const outcome = await serviceOn(store).run({ ...BODY, sort: { clicks: 'desc' } }, NOW);
    expect(outcome.code).toBe(ReportCode.Ok);
    expect(store.streamed).toHaveLength(1);
    expect(store.streamed[0]).toMatchObject({
      split: 'day',
      tier: 'exact',
      timeoutMs: 1234,
      order: [
        { by: 'metric', metric: 'clicks', direction: 'desc' },
        { by: 'key', direction: 'asc' },
      ],
    });
    expect(store.pulled).toBe(1);
    expect(store.queried).toHaveLength(0);
    expect(await recordsOf(outcome.report.records)).toEqual([
      { day: '2026-11-01', impressions: 10, clicks: 1 },
      { day: '2026-11-02', impressions: 25, clicks: 2 },
    ]);
    expect(outcome.report.totals).toEqual({ day: TOTALS_LABEL, impressions: 35, clicks: 3 });
  });

  it('knows 201 (no data) and 300 (columns removed) before anything is sent; 201 wins', async () => {
    expect((await serviceOn(new FakeStore([])).run(BODY, NOW)).code).toBe(ReportCode.NoData);
    const removed = { ...BODY, columns: ['impressions', 'weather'] };
    expect((await serviceOn(new FakeStore(ROWS)).run(removed, NOW)).code).toBe(ReportCode.DimensionsRemoved);
    expect((await serviceOn(new FakeStore([])).run(removed, NOW)).code).toBe(ReportCode.NoData);
  });

  it.each([
    [ReportStoreErrorCode.Unavailable, ReportCode.StoreUnavailable],
    [ReportStoreErrorCode.Timeout, ReportCode.QueryTimeout],
    [ReportStoreErrorCode.Failed, ReportCode.InternalError],
  ])('maps a store failure at the first row (%s) to its code', async (storeCode, code) => {
    const store = new FakeStore(ROWS, new ReportStoreException(storeCode, 'x'));
    const error = await serviceOn(store)
      .run(BODY, NOW)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReportingException);
    expect((error as ReportingException).code).toBe(code);
  });

  it('totals on top: the sums of the rows of the one read, known before the rows are sent', async () => {
    const store = new FakeStore(ROWS);
    const outcome = await serviceOn(store).run({ ...BODY, format: { columnTotals: 'top' } }, NOW);
    // One read of the store, all of it before the answer: no second query to see another state.
    expect(store.streamed).toHaveLength(1);
    expect(store.queried).toHaveLength(0);
    expect(store.pulled).toBe(ROWS.length);
    expect(store.returned).toBe(true);
    expect(outcome.report.totals).toEqual({ day: TOTALS_LABEL, impressions: 35, clicks: 3 });
    expect(await recordsOf(outcome.report.records)).toEqual([
      { day: '2026-11-01', impressions: 10, clicks: 1 },
      { day: '2026-11-02', impressions: 25, clicks: 2 },
    ]);
    expect(outcome.report.totals).toEqual({ day: TOTALS_LABEL, impressions: 35, clicks: 3 });
  });

  it('totals on top are the rows the store gave, whatever a query without the split would say', async () => {
    // The store changed between two reads: the old design took its totals from a second query.
    const store = new FakeStore(ROWS);
    store.query = () => Promise.resolve([{ measures: measures({ unique_impressions: 999, clicks: 99 }) }]);
    const outcome = await serviceOn(store).run(
      { ...BODY, columns: ['impressions', 'clicks', 'ctr'], format: { columnTotals: 'top' } },
      NOW,
    );
    // ctr from the summed counts (3 / 35), not a sum or mean of the rows' ratios (10 % and 8 %).
    expect(outcome.report.totals).toEqual({ day: TOTALS_LABEL, impressions: 35, clicks: 3, ctr: 8.5714 });
  });

  it('totals on top without a split or without rows', async () => {
    const noSplit = new FakeStore(ROWS);
    const outcome = await serviceOn(noSplit).run(
      { ...BODY, splits: [], format: { columnTotals: 'top' } },
      NOW,
    );
    expect(noSplit.queried).toHaveLength(0);
    expect(outcome.report.totals).toEqual({ impressions: 35, clicks: 3 });
    const empty = new FakeStore([]);
    const none = await serviceOn(empty).run({ ...BODY, format: { columnTotals: 'top' } }, NOW);
    expect(none.code).toBe(ReportCode.NoData);
    expect(none.report.totals).toEqual({ day: TOTALS_LABEL, impressions: 0, clicks: 0 });
  });

  it('totals on top: a store failure while the rows are read maps to its code', async () => {
    const store = new FakeStore(ROWS, new ReportStoreException(ReportStoreErrorCode.Timeout, 'x'));
    const error = await serviceOn(store)
      .run({ ...BODY, format: { columnTotals: 'top' } }, NOW)
      .catch((e: unknown) => e);
    expect((error as ReportingException).code).toBe(ReportCode.QueryTimeout);
    expect(store.returned).toBe(true);
  });
});
