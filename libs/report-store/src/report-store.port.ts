import type { AdEvent } from '@app/events';
import type { StoreQuery, StoreRow } from '@app/report-model';

export const REPORT_STORE = Symbol('REPORT_STORE');

/** A valid event and its position in its source (a partition's offset, as a decimal string). */
export interface OffsetEvent {
  readonly offset: string;
  readonly event: AdEvent;
}

export interface IngestResult {
  /** Events written. */
  readonly stored: number;
  /** Events at or below the source's stored offset: a redelivery, left out. */
  readonly skipped: number;
}

export interface ReportStore {
  /** Applies pending schema migrations; safe to call at every start. */
  migrate(): Promise<void>;
  /**
   * Stores the events of one source (a topic partition) atomically with the source's highest
   * offset, and leaves out every event at or below the offset already stored. A redelivery, with
   * the same batch boundaries or others, changes nothing: at-least-once delivery, exactly-once reports.
   */
  ingest(source: string, events: readonly OffsetEvent[]): Promise<IngestResult>;
  /** Aggregates the measures of one split (or none) from the tier the query names. */
  query(query: StoreQuery): Promise<StoreRow[]>;
  /** Whether the store holds no event at all (the embedded start seeds demo data then). */
  isEmpty(): Promise<boolean>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The events above the stored offset, in offset order. */
export function newerThan(events: readonly OffsetEvent[], stored: bigint | undefined): OffsetEvent[] {
  return events.filter((e) => stored === undefined || BigInt(e.offset) > stored);
}

export function highestOffset(events: readonly OffsetEvent[]): bigint {
  return events.reduce((max, e) => (BigInt(e.offset) > max ? BigInt(e.offset) : max), -1n);
}
