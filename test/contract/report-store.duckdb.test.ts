import { openReportStore } from '@app/report-store';
import { reportStoreContract } from './report-store.contract';

reportStoreContract(
  'duckdb',
  () => openReportStore({ kind: 'duckdb', path: ':memory:', sampleDenominator: 10, queryTimeoutMs: 10_000 }),
  10,
);
