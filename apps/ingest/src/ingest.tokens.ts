export const INGEST_CONFIG = Symbol('INGEST_CONFIG');
