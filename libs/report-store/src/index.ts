export * from './report-store.port';
export * from './report-store.exception';
export * from './report-store.factory';
export * from './event-rollup';
export * from './duckdb/duckdb-report.store';
export * from './clickhouse/clickhouse-report.store';
export * from './clickhouse/clickhouse-literal';
export * from './clickhouse/clickhouse-migrator';
