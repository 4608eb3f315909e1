import type { ReportStore } from './report-store.port';
import { ClickHouseReportStore, type ClickHouseStoreOptions } from './clickhouse/clickhouse-report.store';
import { DuckDbReportStore, type DuckDbStoreOptions } from './duckdb/duckdb-report.store';

export type ReportStoreOptions =
  ({ kind: 'duckdb' } & DuckDbStoreOptions) | ({ kind: 'clickhouse' } & ClickHouseStoreOptions);

/** Opens the configured report store and brings its schema up to date. */
export async function openReportStore(options: ReportStoreOptions): Promise<ReportStore> {
  const store =
    options.kind === 'clickhouse'
      ? new ClickHouseReportStore(options)
      : await DuckDbReportStore.open(options);
  await store.migrate();
  return store;
}
