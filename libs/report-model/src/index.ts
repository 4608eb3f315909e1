export * from './report-type';
export * from './split.catalog';
export * from './column.catalog';
export * from './result-code.catalog';
export * from './report-query';
export * from './relative-date.parser';
export * from './dimension-value.catalog';
