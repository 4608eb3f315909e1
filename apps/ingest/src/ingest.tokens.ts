export const INGEST_CONFIG = Symbol('INGEST_CONFIG');
export const INGEST_CLOCK = Symbol('INGEST_CLOCK');

/** The ingest's clock: which days are closed (and so sealed) and what retention drops. */
export type Clock = () => Date;
