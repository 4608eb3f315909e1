export enum ReportStoreErrorCode {
  Unavailable = 'STORE_UNAVAILABLE',
  Timeout = 'STORE_TIMEOUT',
  Failed = 'STORE_FAILED',
}

export class ReportStoreException extends Error {
  constructor(
    readonly code: ReportStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ReportStoreException';
  }
}
