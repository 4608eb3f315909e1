import { describe, expect, inject, it } from 'vitest';
import {
  EXACT_KEY_FIELDS,
  INEXACT_FIELDS,
  RAW_COLUMNS,
  ROLLUP_DIMENSIONS,
  ROLLUP_SCOPE_FIELDS,
  type ReportStore,
} from '@app/report-store';
import { MEASURE_NAMES, SPLITS, type StoreRow } from '@app/report-model';
import {
  STACK,
  clickHouseLines,
  demoEvents,
  expectedBySplit,
  makeEvent,
  migrationsCopy,
  requireOrSkip,
  testClickHouseStore,
} from '@app/testing';

const AFTER_THE_EVENTS = new Date('2026-11-22T12:00:00.000Z');

const store = (database: string, migrationsDir: string, inexactRollup = true) =>
  testClickHouseStore(database, { migrationsDir, inexactRollup });

/** A copy of the migrations before `version` (`NNN`): a store as an older release left it. */
const migrationsBefore = (version: string) => migrationsCopy((file) => file < version);

/** Every inexact split, rows sorted by key. */
async function inexactSplits(reports: ReportStore): Promise<Record<string, StoreRow[]>> {
  const out: Record<string, StoreRow[]> = {};
  for (const split of SPLITS.filter((s) => s.exactness === 'inexact' || s.variantExactness === 'inexact')) {
    const rows = await reports.query({
      range: { start: '2026-01-01', end: '2026-11-21' },
      split: split.name,
      filters: [],
      scope: {},
      tier: 'inexact',
    });
    out[split.name] = rows.sort((a, b) => String(a.key).localeCompare(String(b.key)));
  }
  return out;
}

async function byDay(reports: ReportStore): Promise<Record<string, unknown>> {
  const rows = await reports.query({
    range: { start: '2026-01-01', end: '2026-11-21' },
    split: 'day',
    filters: [],
    scope: {},
    tier: 'exact',
  });
  return Object.fromEntries(rows.map((r) => [r.key, r.measures]));
}

const columns = (database: string, table: string) =>
  clickHouseLines(`SELECT name FROM system.columns WHERE database = '${database}' AND table = '${table}'`);

/** The dimensions the rollup holds, as its view or the migration's copy wrote them. */
const rollupDimensions = (database: string) =>
  clickHouseLines(
    `SELECT DISTINCT dimension FROM ${database}.inexact_daily WHERE dimension != '' ORDER BY dimension`,
  );

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('ClickHouse schema', () => {
  it('a store written under migrations 001-004 keeps every event through 005 (daily partitions, seals)', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_upgrade`;
    const before005 = migrationsBefore('005');
    const events = demoEvents(3, 2000);
    const old = store(database, before005);
    await old.migrate();
    await old.ingest(
      'upgrade/0',
      events.map((event, i) => ({ offset: String(i), event })),
    );
    await old.close();

    const upgraded = store(database, 'clickhouse');
    await upgraded.migrate();
    await upgraded.seal(AFTER_THE_EVENTS);
    expect(await byDay(upgraded)).toEqual(Object.fromEntries(expectedBySplit(events, 'day')));
    await upgraded.close();
  });

  it('a store sealed under migrations 001-005 gets its rollup from the sample in 006, final days staying final', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_rollup`;
    const events = demoEvents(3, 2000);
    // A sealed store as 005 left it: the tiers and markers of a sealed store, copied without the
    // rollup (this release's sealer writes the rollup too, so it cannot seal a 005 schema).
    const sealed = store(`${database}_sealed`, 'clickhouse');
    await sealed.migrate();
    await sealed.ingest(
      'upgrade/0',
      events.map((event, i) => ({ offset: String(i), event })),
    );
    expect((await sealed.seal(AFTER_THE_EVENTS)).sealed).toHaveLength(3);
    await sealed.close();
    const old = store(database, migrationsBefore('006'));
    await old.migrate();
    await clickHouseLines(`INSERT INTO ${database}.events_raw SELECT * FROM ${database}_sealed.events_raw`);
    for (const tier of ['exact_daily', 'inexact_sample']) {
      await clickHouseLines(`TRUNCATE TABLE ${database}.${tier}`);
      await clickHouseLines(`INSERT INTO ${database}.${tier} SELECT * FROM ${database}_sealed.${tier}`);
    }
    // A late click on a closed day: live rows in the sample, which the rollup must inherit.
    const late = makeEvent({ type: 'click', ts: `${events[0].ts.slice(0, 10)}T23:00:00.000Z` });
    await old.ingest('upgrade/late', [{ offset: '0', event: late }]);
    await old.close();

    const upgraded = store(database, 'clickhouse');
    await upgraded.migrate();
    const sampleOnly = store(database, 'clickhouse', false);
    expect(await rollupDimensions(database)).toEqual([...ROLLUP_DIMENSIONS].sort());
    const sample = await inexactSplits(sampleOnly);
    expect(sample.country.reduce((n, r) => n + r.measures.clicks, 0)).toBe(
      events.filter((e) => e.type === 'click').length + 1,
    );
    expect(await inexactSplits(upgraded)).toEqual(sample);
    // The late click's day is sealed again. (A marker is a block number of the raw table it was
    // sealed from; these raw rows were copied into new blocks, so other days may be sealed again too.)
    expect((await upgraded.seal(AFTER_THE_EVENTS)).sealed).toContain(late.ts.slice(0, 10));
    expect(await inexactSplits(upgraded)).toEqual(sample);
    expect(await inexactSplits(sampleOnly)).toEqual(sample);
    expect(await upgraded.seal(AFTER_THE_EVENTS)).toEqual({ sealed: [], final: 3 });
    await upgraded.close();
    await sampleOnly.close();
  });

  it('has the columns the code writes and reads: one list of dimensions for the SQL files and the code', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_columns`;
    const fresh = store(database, 'clickhouse');
    await fresh.migrate();
    await fresh.ingest('columns/0', [{ offset: '0', event: makeEvent({ type: 'click' }) }]);
    await fresh.close();
    expect(await rollupDimensions(database)).toEqual([...ROLLUP_DIMENSIONS].sort());
    const sealColumns = ['seal_mark', 'live_rows'];
    expect(await columns(database, 'exact_daily')).toEqual([
      'day',
      ...EXACT_KEY_FIELDS,
      ...MEASURE_NAMES,
      ...sealColumns,
    ]);
    expect(await columns(database, 'inexact_sample')).toEqual([
      'day',
      'hour',
      ...INEXACT_FIELDS,
      ...MEASURE_NAMES,
      ...sealColumns,
    ]);
    expect(await columns(database, 'inexact_daily')).toEqual([
      'day',
      'dimension',
      'value',
      ...ROLLUP_SCOPE_FIELDS,
      ...MEASURE_NAMES,
      ...sealColumns,
    ]);
    expect(await columns(database, 'inexact_monthly')).toEqual([
      'side',
      ...(await columns(database, 'inexact_daily')),
    ]);
    expect(await columns(database, 'events_raw')).toEqual(RAW_COLUMNS);
  });

  it('moves the offsets recorded before 008 (the highest stored) on to the offset to read next', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_008`;
    const old = store(database, migrationsBefore('008'));
    await old.migrate();
    const events = demoEvents(1, 200).map((event, i) => ({ offset: String(i), event }));
    // As the ingest before 008 left it: offsets 0 to 99 stored, 99 recorded.
    await old.ingest('upgrade/0', events.slice(0, 100));
    await clickHouseLines(`TRUNCATE TABLE ${database}.ingested_offsets`);
    await clickHouseLines(`INSERT INTO ${database}.ingested_offsets VALUES ('upgrade/0', 99, 100)`);
    await old.close();
    const upgraded = store(database, 'clickhouse');
    await upgraded.migrate();
    expect(await upgraded.ingest('upgrade/0', events)).toEqual({ stored: 100, skipped: 100 });
    expect(await clickHouseLines(`SELECT uniqExact(event_id), count() FROM ${database}.events_raw`)).toEqual([
      '200\t200',
    ]);
    await upgraded.close();
    await clickHouseLines(`DROP DATABASE ${database}`);
  });

  it('keeps one offset row per source once merged: the offset to read next, after the highest stored', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_offsets`;
    const fresh = store(database, 'clickhouse');
    await fresh.migrate();
    const events = demoEvents(1, 300);
    for (let from = 0; from < events.length; from += 100) {
      await fresh.ingest(
        'offsets/0',
        events.slice(from, from + 100).map((event, i) => ({ offset: String(from + i), event })),
      );
    }
    await clickHouseLines(`OPTIMIZE TABLE ${database}.ingested_offsets FINAL`);
    expect(await clickHouseLines(`SELECT source, last_offset FROM ${database}.ingested_offsets`)).toEqual([
      `offsets/0\t${events.length}`,
    ]);
    const again = events.map((event, i) => ({ offset: String(i), event }));
    expect(await fresh.ingest('offsets/0', again)).toEqual({ stored: 0, skipped: events.length });
    await fresh.close();
  });
});
