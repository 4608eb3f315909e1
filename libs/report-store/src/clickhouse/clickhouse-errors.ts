import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';

/** ClickHouse error codes that mean the query ran out of time. */
const TIMEOUT_CODES = new Set(['159', '160']);

export function classify(error: unknown, what: string): ReportStoreException {
  if (error instanceof ReportStoreException) {
    return error;
  }
  const e = error as { code?: string; message?: string };
  const message = e.message ?? String(error);
  if (
    /ECONNREFUSED|ECONNRESET|socket hang up|ENOTFOUND|EHOSTUNREACH|Timeout error/i.test(message) ||
    e.code === 'ECONNREFUSED'
  ) {
    return new ReportStoreException(ReportStoreErrorCode.Unavailable, `${what}: ClickHouse unreachable`, {
      cause: error,
    });
  }
  if ((e.code && TIMEOUT_CODES.has(e.code)) || /TIMEOUT_EXCEEDED|Timeout exceeded/i.test(message)) {
    return new ReportStoreException(ReportStoreErrorCode.Timeout, `${what}: timed out`, { cause: error });
  }
  return new ReportStoreException(ReportStoreErrorCode.Failed, `${what}: ${message}`, { cause: error });
}
