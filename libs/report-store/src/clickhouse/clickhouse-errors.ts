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

/** Socket errors that mean the server was not reached or went away, not that the query failed. */
const CONNECTION_FAILURE = /ECONNREFUSED|ECONNRESET|socket hang up|EHOSTUNREACH|ENOTFOUND|EPIPE/;

/**
 * Whether `error` (or an error it wraps) is a refused or broken connection, after which the same
 * read may go to another node of a cluster. A query timeout, an abort or an error ClickHouse
 * answered (syntax, memory) is not: another node would fail the same way, or the caller gave up.
 */
export function isConnectionFailure(error: unknown): boolean {
  for (
    let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth += 1
  ) {
    if (
      (typeof e.code === 'string' && CONNECTION_FAILURE.test(e.code)) ||
      (typeof e.message === 'string' && CONNECTION_FAILURE.test(e.message))
    ) {
      return true;
    }
    e = e.cause as typeof e;
  }
  return false;
}
