import { openReportStore } from '@app/report-store';
import { closedStoreContract, reportStoreContract, retentionContract } from './report-store.contract';

const openDuckDb = (rawRetentionMonths = 120) =>
  openReportStore({
    kind: 'duckdb',
    path: ':memory:',
    sampleDenominator: 10,
    queryTimeoutMs: 10_000,
    rawRetentionMonths,
  });

reportStoreContract('duckdb', () => openDuckDb(), 10, { lateEventOnSealedDay: 'at once' });
closedStoreContract('duckdb', () => openDuckDb());
retentionContract('duckdb', openDuckDb);
