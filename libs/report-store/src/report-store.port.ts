import type { AdEvent } from '@app/events';
import type { StoreQuery, StoreRow } from '@app/report-model';

export const REPORT_STORE = Symbol('REPORT_STORE');

export interface IngestResult {
  /** False when the batch id had been stored before: a replay, skipped whole. */
  readonly stored: boolean;
  readonly events: number;
}

export interface ReportStore {
  /** Applies pending schema migrations; safe to call at every start. */
  migrate(): Promise<void>;
  /**
   * Stores one batch of valid events atomically under its batch id. Storing the same batch id
   * twice changes nothing, which turns at-least-once delivery into exactly-once reports.
   */
  ingest(batchId: string, events: readonly AdEvent[]): Promise<IngestResult>;
  /** Aggregates the measures of one split (or none) from the tier the query names. */
  query(query: StoreQuery): Promise<StoreRow[]>;
  /** Whether the store holds no event at all (the embedded start seeds demo data then). */
  isEmpty(): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
