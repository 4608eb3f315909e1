export * from './report-store.port';
export * from './report-store.exception';
export * from './report-store.factory';
export * from './event-rollup';
export * from './duckdb/duckdb-report.store';
