export * from './require-server';
export * from './report-client';
export * from './event-fixtures';
export * from './stack-env';
export * from './openrtb-schema';
export * from './private-stack';
export * from './clickhouse-fixtures';
export * from './result-code-table';
