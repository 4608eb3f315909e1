export * from './reporting.module';
export * from './reporting.config';
export * from './reporting.tokens';
