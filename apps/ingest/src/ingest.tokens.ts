export const INGEST_CONFIG = Symbol('INGEST_CONFIG');
export const INGEST_CLOCK = Symbol('INGEST_CLOCK');
/** The longest pause between two tries of a block the store refused, in ms. */
export const INGEST_RETRY_MAX_MS = Symbol('INGEST_RETRY_MAX_MS');

/** The ingest's clock: which days are closed (and so sealed) and what retention drops. */
export type Clock = () => Date;
