import { describe, inject } from 'vitest';
import { openReportStore } from '@app/report-store';
import { STACK, requireOrSkip } from '@app/testing';
import { closedStoreContract, reportStoreContract, retentionContract } from './report-store.contract';

let databases = 0;
let lastDatabase = '';
const openClickHouse = (
  rawRetentionMonths = 120,
  database = `adx_test_${process.pid}_${Date.now()}_${databases++}`,
  inexactRollup = true,
) => {
  lastDatabase = database;
  return openReportStore({
    kind: 'clickhouse',
    url: STACK.clickhouseUrl,
    database,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 10_000,
    rawRetentionMonths,
    inexactRollup,
  });
};

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('clickhouse', () => {
  reportStoreContract('clickhouse', () => openClickHouse(), 10, {
    lateEventOnSealedDay: 'at the next seal',
    // The same database, every inexact query read from the sample rather than the rollup.
    sampleTwin: () => openClickHouse(120, lastDatabase, false),
  });
  closedStoreContract('clickhouse', () => openClickHouse());
  retentionContract('clickhouse', openClickHouse);
});
