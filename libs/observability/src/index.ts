export * from './logger';
export * from './metrics';
export * from './observability.module';
export * from './request-logging';
export * from './exchange-metrics';
export * from './cluster-metrics';
