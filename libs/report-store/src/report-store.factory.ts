import type { ReportStore } from './report-store.port';
import { DuckDbReportStore, type DuckDbStoreOptions } from './duckdb/duckdb-report.store';

export type ReportStoreOptions = { kind: 'duckdb' } & DuckDbStoreOptions;

/** Opens the configured report store and brings its schema up to date. */
export async function openReportStore(options: ReportStoreOptions): Promise<ReportStore> {
  const store = await DuckDbReportStore.open(options);
  await store.migrate();
  return store;
}
