import { openReportStore } from '@app/report-store';
import { closedStoreContract, reportStoreContract } from './report-store.contract';

const openDuckDb = () =>
  openReportStore({ kind: 'duckdb', path: ':memory:', sampleDenominator: 10, queryTimeoutMs: 10_000 });

reportStoreContract('duckdb', openDuckDb, 10);
closedStoreContract('duckdb', openDuckDb);
