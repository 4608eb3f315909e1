/** Why the event spool refused an append or could not start. */
export enum SpoolErrorCode {
  /** The spool holds its maximum: the caller's events were not accepted. */
  Full = 'SPOOL_FULL',
  Closed = 'SPOOL_CLOSED',
  /** A write failed and could not be undone: appending after it could corrupt accepted entries. */
  Unwritable = 'SPOOL_UNWRITABLE',
  NoSlot = 'SPOOL_NO_SLOT',
}

/** An error of the event spool, with its code. */
export class SpoolException extends Error {
  constructor(
    readonly code: SpoolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SpoolException';
  }
}
