import { ReportStoreErrorCode, ReportStoreException } from './report-store.exception';

/**
 * A sum read from a store (ClickHouse UInt64 as JSON text, DuckDB HUGEINT as a bigint) as a
 * JavaScript number, refused past 2^53 − 1 instead of rounded: a billed figure is exact or absent.
 * (2^53 micro-USD is about 9 billion USD in one cell.)
 */
export function exactNumber(value: string | number | bigint | null | undefined): number {
  if (value === null || value === undefined) {
    return 0;
  }
  const safe =
    typeof value === 'bigint'
      ? value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      : Number.isSafeInteger(Number(value));
  if (!safe) {
    throw new ReportStoreException(
      ReportStoreErrorCode.Failed,
      `a sum of ${String(value)} is beyond what a report can carry exactly (2^53 - 1)`,
    );
  }
  return Number(value);
}
