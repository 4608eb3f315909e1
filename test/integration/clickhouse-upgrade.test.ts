import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { ClickHouseReportStore, EXACT_KEY_FIELDS, INEXACT_FIELDS, type ReportStore } from '@app/report-store';
import { MEASURE_NAMES } from '@app/report-model';
import { STACK, demoEvents, expectedBySplit, requireOrSkip } from '@app/testing';

const AFTER_THE_EVENTS = new Date('2026-11-22T12:00:00.000Z');

function store(database: string, migrationsDir: string): ClickHouseReportStore {
  return new ClickHouseReportStore({
    url: STACK.clickhouseUrl,
    database,
    migrationsDir,
    sampleDenominator: 10,
    queryTimeoutMs: 20_000,
    rawRetentionMonths: 120,
  });
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

async function columns(database: string, table: string): Promise<string[]> {
  const response = await fetch(`${STACK.clickhouseUrl}/`, {
    method: 'POST',
    body: `SELECT name FROM system.columns WHERE database = '${database}' AND table = '${table}' FORMAT TSV`,
  });
  return (await response.text()).split('\n').filter(Boolean);
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('ClickHouse schema', () => {
  it('a store written under migrations 001-004 keeps every event through 005 (daily partitions, seals)', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_upgrade`;
    const before005 = mkdtempSync(path.join(tmpdir(), 'adx-migrations-'));
    for (const file of readdirSync('clickhouse').filter((f) => f < '005')) {
      copyFileSync(path.join('clickhouse', file), path.join(before005, file));
    }
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

  it('has the columns the code writes and reads: one list of dimensions for the SQL files and the code', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_columns`;
    const fresh = store(database, 'clickhouse');
    await fresh.migrate();
    await fresh.close();
    const sealColumns = ['seal_raw_rows', 'live_rows'];
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
    expect(await columns(database, 'events_raw')).toEqual([
      'event_date',
      'hour',
      'ts',
      'event_id',
      'type',
      'source',
      'offset',
      ...INEXACT_FIELDS,
      'sample_weight',
      ...MEASURE_NAMES,
    ]);
  });
});
