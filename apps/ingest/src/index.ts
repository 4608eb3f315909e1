export * from './ingest.module';
export * from './ingest.config';
export * from './ingest.service';
