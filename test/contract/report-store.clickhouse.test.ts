import { describe, inject } from 'vitest';
import { openReportStore } from '@app/report-store';
import { STACK, requireOrSkip } from '@app/testing';
import { closedStoreContract, reportStoreContract, retentionContract } from './report-store.contract';

let databases = 0;
const openClickHouse = (rawRetentionMonths = 120) =>
  openReportStore({
    kind: 'clickhouse',
    url: STACK.clickhouseUrl,
    database: `adx_test_${process.pid}_${Date.now()}_${databases++}`,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 10_000,
    rawRetentionMonths,
  });

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('clickhouse', () => {
  reportStoreContract('clickhouse', () => openClickHouse(), 10);
  closedStoreContract('clickhouse', () => openClickHouse());
  retentionContract('clickhouse', openClickHouse);
});
