export * from './ingest.module';
export * from './ingest.config';
export * from './ingest.service';
export * from './store-maintenance.service';
export * from './ingest.tokens';
export * from './event-bus.transport';
export * from './ingest-progress';
