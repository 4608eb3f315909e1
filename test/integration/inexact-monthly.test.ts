import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { AdEvent } from '@app/events';
import type { ClickHouseReportStore, OffsetEvent } from '@app/report-store';
import { MEASURE_NAMES, SPLITS, type StoreQuery, type StoreRow } from '@app/report-model';
import {
  STACK,
  clickHouseLines,
  makeEvent,
  migrationsCopy,
  requireOrSkip,
  testClickHouseStore,
} from '@app/testing';

/**
 * The monthly copy of the inexact rollup (clickhouse/009_inexact_monthly.sql): what the sealer
 * copies, when it copies it again, two sealers at once, the migration's first copy, and that the
 * reports read it (and read the same rows as the sample does) over ranges the copy holds whole, in
 * part, or not at all.
 */

/** The closed days span two months; `TODAY` is not closed. */
const NOW = new Date('2026-11-03T00:00:05.000Z');
const CLOSED = ['2026-10-29', '2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02'];
const TODAY = '2026-11-03';

const INEXACT_SPLITS = SPLITS.filter((s) => s.exactness === 'inexact' || s.variantExactness === 'inexact');

/** Impressions, clicks and conversions of a day, spread over every dimension the rollup holds. */
function eventsOf(day: string, count: number, prefix = day): AdEvent[] {
  return Array.from({ length: count }, (_, i) =>
    makeEvent({
      event_id: `${prefix}-${i}`,
      ts: `${day}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00.000Z`,
      type: (['impression', 'impression', 'impression', 'click', 'conversion'] as const)[i % 5],
      ...(i % 10 === 4 ? { attribution: 'post_view' as const } : {}),
      ...(i % 6 === 1 ? { reopen: true } : {}),
      publisher_id: ['pub-1', 'pub-2'][i % 2],
      advertiser_id: ['adv-1', 'adv-2', 'adv-3'][i % 3],
      country: ['US', 'FR', 'DE', 'GB'][i % 4],
      zip: String(10_000 + (i % 37)),
      device_model: ['iPhone 15', 'Pixel 8', ''][i % 3],
      segment_key: ['interest', ''][i % 2],
      segment_value: ['sports', 'finance', ''][i % 3],
      spend_micros: 1_000 + i,
      revenue_micros: 700 + i,
    }),
  );
}

const withOffsets = (events: readonly AdEvent[], first = 0): OffsetEvent[] =>
  events.map((event, i) => ({ offset: String(first + i), event }));

/** A rollup table's measures and seal columns per closed day and dimension (`where` narrows it). */
const perDayAndDimension = (database: string, table: string, where = '1') =>
  clickHouseLines(
    `SELECT toString(day), dimension, ${[...MEASURE_NAMES, 'seal_mark', 'live_rows'].map((c) => `sum(${c})`).join(', ')}
     FROM ${database}.${table} WHERE day < toDate('${TODAY}') AND ${where} GROUP BY day, dimension ORDER BY day, dimension`,
  );

/**
 * The copy holds the rollup's rows on side '', and on each account side the same sums per day and
 * dimension with one account column left empty.
 */
async function expectCopyOfRollup(database: string): Promise<void> {
  expect(await perDayAndDimension(database, 'inexact_monthly', "side = ''")).toEqual(
    await perDayAndDimension(database, 'inexact_daily'),
  );
  const rollup = await perDayAndDimension(database, 'inexact_daily', "dimension != ''");
  expect(rollup.length).toBeGreaterThan(0);
  for (const [side, emptied] of [
    ['advertiser', 'publisher_id'],
    ['publisher', 'advertiser_id'],
  ]) {
    expect(await perDayAndDimension(database, 'inexact_monthly', `side = '${side}'`), side).toEqual(rollup);
    expect(
      await clickHouseLines(
        `SELECT count() FROM ${database}.inexact_monthly WHERE side = '${side}' AND ${emptied} != ''`,
      ),
    ).toEqual(['0']);
  }
}

const monthlyParts = (database: string) =>
  clickHouseLines(
    `SELECT partition_id, name FROM system.parts WHERE database = '${database}' AND table = 'inexact_monthly' AND active ORDER BY partition_id, name`,
  );

const copiedDays = (database: string) =>
  clickHouseLines(`SELECT DISTINCT toString(day) FROM ${database}.inexact_monthly ORDER BY day`);

const store = (database: string, inexactRollup = true, migrationsDir = 'clickhouse') =>
  testClickHouseStore(database, { inexactRollup, migrationsDir });

/** Every inexact split over `range`, rows sorted by key, for a store opened now (its copy's day read anew). */
async function inexactSplits(
  database: string,
  range: StoreQuery['range'],
  inexactRollup = true,
): Promise<Record<string, StoreRow[]>> {
  const reports = store(database, inexactRollup);
  try {
    const out: Record<string, StoreRow[]> = {};
    for (const split of INEXACT_SPLITS) {
      for (const scope of [
        {},
        { advertiserIds: ['adv-2'] },
        { publisherIds: ['pub-1'] },
        { advertiserIds: ['adv-2', 'adv-3'], publisherIds: ['pub-1'] },
      ]) {
        const rows = await reports.query({ range, split: split.name, filters: [], scope, tier: 'inexact' });
        out[`${split.name} ${JSON.stringify(scope)}`] = rows.sort((a, b) =>
          String(a.key).localeCompare(String(b.key)),
        );
      }
    }
    return out;
  } finally {
    await reports.close();
  }
}

/** The rollup's answers (through the copy) are the sample's, over ranges read from each table. */
async function expectSampleRows(database: string): Promise<void> {
  for (const range of [
    { start: CLOSED[0], end: CLOSED[4] },
    { start: CLOSED[0], end: CLOSED[2] },
    { start: CLOSED[3], end: TODAY },
    { start: CLOSED[0], end: TODAY },
    { start: TODAY, end: TODAY },
  ]) {
    const sample = await inexactSplits(database, range, false);
    expect(Object.values(sample).some((rows) => rows.length > 0)).toBe(true);
    expect(await inexactSplits(database, range), JSON.stringify(range)).toEqual(sample);
  }
}

const databases: string[] = [];
const newDatabase = (name: string) => {
  const database = `adx_test_${process.pid}_${Date.now()}_${name}`;
  databases.push(database);
  return database;
};

/** A store holding the closed days and today's events, sealed once. */
async function sealedStore(name: string): Promise<{ database: string; writer: ClickHouseReportStore }> {
  const database = newDatabase(name);
  const writer = store(database);
  await writer.migrate();
  const events = [...CLOSED, TODAY].flatMap((day) => eventsOf(day, 600));
  await writer.ingest('monthly/0', withOffsets(events));
  expect((await writer.seal(NOW)).sealed).toEqual(CLOSED);
  return { database, writer };
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('the monthly copy of the inexact rollup', () => {
  afterAll(async () => {
    for (const database of databases) {
      await clickHouseLines(`DROP DATABASE IF EXISTS ${database}`);
    }
  });

  it('holds every closed day as the rollup does, a partition a month, and answers every split as the sample does', async () => {
    const { database, writer } = await sealedStore('copy');
    await expectCopyOfRollup(database);
    expect(await copiedDays(database)).toEqual(CLOSED);
    expect((await monthlyParts(database)).map((p) => p.split('\t')[0])).toEqual(['202610', '202611']);
    await expectSampleRows(database);
    // Sealing again copies nothing: the copy's markers are the rollup's.
    const parts = await monthlyParts(database);
    expect(await writer.seal(NOW)).toEqual({ sealed: [], final: CLOSED.length });
    expect(await monthlyParts(database)).toEqual(parts);
    await writer.close();

    // The reports read the copied days from the copy: with a copied day gone from the rollup, a
    // range of copied days answers as before.
    const before = await inexactSplits(database, { start: CLOSED[0], end: CLOSED[4] });
    await clickHouseLines(`ALTER TABLE ${database}.inexact_daily DROP PARTITION '${CLOSED[1]}'`);
    expect(await inexactSplits(database, { start: CLOSED[0], end: CLOSED[4] })).toEqual(before);
  });

  it('takes a late event on a copied day at the next seal, copying its month alone again', async () => {
    const { database, writer } = await sealedStore('late');
    const parts = await monthlyParts(database);
    const late = eventsOf(CLOSED[1], 50, 'late');
    await writer.ingest('monthly/late', withOffsets(late));
    expect((await writer.seal(NOW)).sealed).toEqual([CLOSED[1]]);
    const after = await monthlyParts(database);
    expect(after.filter((p) => p.startsWith('202611'))).toEqual(parts.filter((p) => p.startsWith('202611')));
    expect(after.filter((p) => p.startsWith('202610'))).not.toEqual(
      parts.filter((p) => p.startsWith('202610')),
    );
    await expectCopyOfRollup(database);
    const clicks = (rows: Record<string, StoreRow[]>) =>
      rows['country {}'].reduce((n, r) => n + r.measures.clicks, 0);
    const range = { start: CLOSED[0], end: CLOSED[4] };
    expect(clicks(await inexactSplits(database, range))).toBe(
      (CLOSED.length * 600) / 5 + late.filter((e) => e.type === 'click').length,
    );
    await expectSampleRows(database);
    await writer.close();
  });

  it('loses no copied day when two sealers copy the same months at once', async () => {
    const { database, writer } = await sealedStore('two');
    const other = store(database);
    for (let round = 0; round < 3; round += 1) {
      await writer.ingest(
        `monthly/round-${round}`,
        withOffsets([...eventsOf(CLOSED[2], 20, `r${round}a`), ...eventsOf(CLOSED[3], 20, `r${round}b`)]),
      );
      await Promise.all([writer.seal(NOW), other.seal(NOW)]);
      expect(await copiedDays(database)).toEqual(CLOSED);
    }
    // Settled by one more pass at most: the copy is the rollup again.
    await writer.seal(NOW);
    await expectCopyOfRollup(database);
    await expectSampleRows(database);
    await writer.close();
    await other.close();
  });

  it('copies the closed days already stored when migration 009 runs', async () => {
    const database = newDatabase('009');
    const before009 = migrationsCopy((f) => f < '009');
    // As a release before 009 left it: events stored (this release's sealer writes the copy too,
    // so the days stay unsealed here), the days closed by the wall clock the migration reads.
    const old = store(database, true, before009);
    await old.migrate();
    await old.ingest('monthly/0', withOffsets(CLOSED.flatMap((day) => eventsOf(day, 300))));
    await old.close();
    const upgraded = store(database);
    await upgraded.migrate();
    expect(await copiedDays(database)).toEqual(CLOSED);
    await expectCopyOfRollup(database);
    // Its statements run again (a migration that failed further on) copy nothing twice.
    const again = migrationsCopy(() => true);
    copyFileSync(path.join('clickhouse', '009_inexact_monthly.sql'), path.join(again, '999_again.sql'));
    await store(database, true, again).migrate();
    await expectCopyOfRollup(database);
    expect((await upgraded.seal(NOW)).sealed).toEqual(CLOSED);
    await expectCopyOfRollup(database);
    await upgraded.close();
  });
});
