import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StoreStreamQuery } from '../report-store.port';
import { demoEvents } from '@app/testing';
import { DuckDbReportStore } from './duckdb-report.store';

const QUERY: StoreStreamQuery = {
  range: { start: '2026-01-01', end: '2026-12-31' },
  filters: [],
  scope: {},
  tier: 'exact',
  split: 'day',
};

describe('DuckDbReportStore on a file', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  async function open(file: string): Promise<DuckDbReportStore> {
    const store = await DuckDbReportStore.open({
      path: file,
      sampleDenominator: 10,
      queryTimeoutMs: 10_000,
      rawRetentionMonths: 120,
    });
    await store.migrate();
    return store;
  }

  it('closes cleanly (the log folded into the file) after reports left before their last row', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'adx-duckdb-'));
    dirs.push(dir);
    const file = path.join(dir, 'reports.duckdb');
    const store = await open(file);
    const events = demoEvents(3, 300);
    await store.ingest(
      'adx.impression/0',
      events.map((event, i) => ({ offset: String(i), event })),
    );
    const days = (await store.query(QUERY)).length;
    expect(days).toBeGreaterThan(1);
    // Clients that go away after the first row, while the ingest goes on: streams left half-read.
    for (let round = 1; round <= 5; round += 1) {
      expect(await store.query(QUERY)).toHaveLength(days);
      for await (const row of store.stream(QUERY)) {
        expect(row.key).toBeDefined();
        break;
      }
      await store.ingest(
        'adx.impression/1',
        events.slice(0, 50).map((event, i) => ({ offset: String(1000 * round + i), event })),
      );
    }

    await expect(store.close()).resolves.toBeUndefined();
    expect(existsSync(`${file}.wal`)).toBe(false);
    const reopened = await open(file);
    expect(await reopened.query(QUERY)).toHaveLength(days);
    await reopened.close();
  });
});
