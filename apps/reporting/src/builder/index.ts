export * from './report-builder.module';
export * from './report-builder.options';
export * from './builder-catalog';
export * from './result-code.advice';
