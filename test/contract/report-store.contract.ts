import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLITS, type StoreQuery, type StoreRow } from '@app/report-model';
import type { AdEvent } from '@app/events';
import { ReportStoreErrorCode, type OffsetEvent, type ReportStore } from '@app/report-store';
import { demoEvents, expectedBySplit, makeEvent } from '@app/testing';

const RANGE = { start: '2026-01-01', end: '2026-11-21' };

function withOffsets(events: readonly AdEvent[], first: number): OffsetEvent[] {
  return events.map((event, i) => ({ offset: String(first + i), event }));
}

/** Row order is not part of the contract: the reporting app sorts. */
function byKey(rows: readonly StoreRow[]): StoreRow[] {
  return [...rows].sort((a, b) => String(a.key).localeCompare(String(b.key)));
}

function query(overrides: Partial<StoreQuery>): StoreQuery {
  return { range: RANGE, filters: [], scope: {}, tier: 'exact', ...overrides };
}

/**
 * What every report store must do. `create` returns an empty store with its schema applied and
 * the inexact tier sampling 1 impression in `sampleDenominator`.
 */
export function reportStoreContract(
  name: string,
  create: () => Promise<ReportStore>,
  sampleDenominator: number,
): void {
  describe(`report store contract: ${name}`, () => {
    let store: ReportStore;
    const events = demoEvents(5, 4000);

    beforeAll(async () => {
      store = await create();
      expect(await store.isEmpty()).toBe(true);
      for (let i = 0; i < events.length; i += 2500) {
        const result = await store.ingest('contract/0', withOffsets(events.slice(i, i + 2500), i));
        expect(result).toEqual({ stored: Math.min(2500, events.length - i), skipped: 0 });
      }
    });
    afterAll(async () => {
      await store?.close();
    });

    it('is no longer empty', async () => {
      expect(await store.isEmpty()).toBe(false);
    });

    for (const split of SPLITS.filter((s) => s.exactness === 'exact')) {
      it(`answers the exact split ${split.name} to the unit`, async () => {
        const rows = await store.query(query({ split: split.name }));
        const expected = expectedBySplit(events, split.name);
        expect(rows).toHaveLength(expected.size);
        for (const row of rows) expect(row.measures).toEqual(expected.get(row.key!));
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
      expect(await store.ingest('contract/other-source', withOffsets(extra.slice(0, 1), 100))).toEqual({
        stored: 1,
        skipped: 0,
      });
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

    it('answers every inexact split with totals close to the exact ones', async () => {
      const [exact] = await store.query(query({}));
      for (const split of SPLITS.filter((s) => s.exactness === 'inexact')) {
        const rows = await store.query(query({ split: split.name, tier: 'inexact' }));
        const clicks = rows.reduce((sum, r) => sum + r.measures.clicks, 0);
        expect(clicks, split.name).toBe(exact.measures.clicks);
        const expectedKeys = new Set(
          events.filter((e) => e.type === 'click').map((e) => String(expectedBySplitKey(e, split.name))),
        );
        for (const key of expectedKeys) expect(rows.map((r) => String(r.key))).toContain(key);
      }
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
      for (const q of shapes) serial.push(byKey(await store.query(q)));
      expect((await Promise.all(shapes.map((q) => store.query(q)))).map(byKey)).toEqual(serial);
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
