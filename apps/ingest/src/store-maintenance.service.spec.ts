import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@app/config';
import { InProcessEventBus } from '@app/events';
import { openReportStore, type ReportStore } from '@app/report-store';
import { makeEvent } from '@app/testing';
import type { INestApplication } from '@nestjs/common';
import { IngestConfig } from './ingest.config';
import { IngestModule } from './ingest.module';

const ALL = {
  range: { start: '2026-01-01', end: '2026-11-21' },
  filters: [],
  scope: {},
  tier: 'exact' as const,
};

describe('StoreMaintenanceService', () => {
  let app: INestApplication | undefined;
  let store: ReportStore | undefined;

  afterEach(async () => {
    await app?.close();
    await store?.close();
  });

  it('runs retention periodically: once the ids of a day past the retention are dropped, that day no longer deduplicates; the first day kept still does', async () => {
    store = await openReportStore({
      kind: 'duckdb',
      path: ':memory:',
      sampleDenominator: 10,
      queryTimeoutMs: 10_000,
      rawRetentionMonths: 3,
    });
    const old = makeEvent({ type: 'click', ts: '2026-07-31T10:00:00.000Z' });
    const recent = makeEvent({ type: 'click', ts: '2026-08-01T10:00:00.000Z' });
    const module = await Test.createTestingModule({
      imports: [
        IngestModule.forRoot({
          config: loadConfig(IngestConfig, { RETENTION_INTERVAL_MS: '25', SEAL_INTERVAL_MS: '25' }),
          bus: new InProcessEventBus(),
          reportStore: store,
          clock: () => new Date('2026-11-22T12:00:00.000Z'),
        }),
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
    // Stored after the run at start: only a later run of the job can drop these ids.
    await new Promise((r) => setTimeout(r, 50));
    await store.ingest('maintenance/a', [
      { offset: '0', event: old },
      { offset: '1', event: recent },
    ]);
    // Delivered again from another source: counted again only where the ids were dropped. By day,
    // so that a retention that dropped the recent day's ids (or only those) shows: the old day
    // reaches 2 clicks once a run of the job has dropped its ids, and the recent day stays at 1.
    const clicksByDay = async () =>
      Object.fromEntries(
        (await store!.query({ ...ALL, split: 'day' })).map((row) => [row.key, row.measures.clicks]),
      );
    let byDay = await clicksByDay();
    expect(byDay).toEqual({ '2026-07-31': 1, '2026-08-01': 1 });
    for (let tries = 0; tries < 40 && byDay['2026-07-31'] < 2; tries += 1) {
      await new Promise((r) => setTimeout(r, 25));
      await store.ingest(`maintenance/retry-${tries}`, [
        { offset: '0', event: old },
        { offset: '1', event: recent },
      ]);
      byDay = await clicksByDay();
    }
    expect(byDay).toEqual({ '2026-07-31': 2, '2026-08-01': 1 });
  });
});
