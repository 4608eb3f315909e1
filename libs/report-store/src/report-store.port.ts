import type { AdEvent, ScannedAdEvent } from '@app/events';
import type { StoreQuery, StoreRow } from '@app/report-model';
import type { StoreOrderTerm } from './store-order';

export const REPORT_STORE = Symbol('REPORT_STORE');

/** A valid event and its position in its source (a partition's offset, as a decimal string). */
export interface OffsetEvent {
  readonly offset: string;
  readonly event: AdEvent;
  /**
   * Set when the event was validated from its message's bytes without being parsed
   * (`AdEventScanner`): a store may write it from there (ClickHouse does) while `scanned.fields`
   * is set; `event` then parses the bytes when read.
   */
  readonly scanned?: ScannedAdEvent;
}

export interface IngestResult {
  /** Events written. */
  readonly stored: number;
  /** Events left out: at or below the source's stored offset (a redelivery), or already stored (an event id seen before). */
  readonly skipped: number;
}

export interface IngestOptions {
  /**
   * Aborted when the caller may no longer own the source (a consumer that lost its partition): no
   * write starts after it, and a write in flight is cancelled.
   */
  readonly signal?: AbortSignal;
}

/** What one pass of `seal` did. */
export interface SealResult {
  /** Closed days whose tiers were recomputed, `YYYY-MM-DD`. */
  readonly sealed: readonly string[];
  /** Closed days that were already final. */
  readonly final: number;
}

/** A query whose rows come sorted: by each term in turn; rows that tie on every term, in any order. */
export interface StoreStreamQuery extends StoreQuery {
  readonly order?: readonly StoreOrderTerm[];
}

export interface ReportStore {
  /** Applies pending schema migrations; safe to call at every start. */
  migrate(): Promise<void>;
  /**
   * Stores the events of one source (a topic partition) and records how far the source is stored,
   * leaving out the events of the offsets already stored. What each store guarantees on
   * a failure half-way differs (DuckDB: one transaction; ClickHouse: none, see `seal`); on both,
   * once `seal` has run after the last write, every exact split of a closed day counts each
   * event id once. `events` is read once, in order, perhaps while the write is under way (the
   * caller may parse as it is read); events sharing an offset (a Kafka frame) are stored together.
   */
  ingest(source: string, events: Iterable<OffsetEvent>, options?: IngestOptions): Promise<IngestResult>;
  /**
   * Makes the tiers of every closed day (before the UTC day of `now`) count each event id once,
   * whatever was written twice or half-way: ClickHouse recomputes a day from its raw events
   * whenever they changed since the day was last sealed; DuckDB deduplicates on write and has
   * nothing to do. Safe to run from several processes at once.
   */
  seal(now: Date): Promise<SealResult>;
  /** Drops what is older than the retention (raw events, deduplication ids); returns what went. */
  dropExpired(now: Date): Promise<readonly string[]>;
  /**
   * Aggregates the measures of one split (or none) from the tier the query names, all rows at once
   * (the rows of `stream`, collected; in the query's order when it gives one).
   */
  query(query: StoreStreamQuery): Promise<StoreRow[]>;
  /**
   * The same rows as `query`, with the same keys, measures, exactness and errors, read from the
   * store as the consumer asks for them, in the order the query gives (sorted by the store's SQL).
   *
   * Nothing runs until the first `next()`. Every failure rejects a `next()` with a
   * `ReportStoreException`: a store that is closed or unreachable (`STORE_UNAVAILABLE`), a query
   * that outlives `timeoutMs` (`STORE_TIMEOUT`), anything else (`STORE_FAILED`). An aggregate with
   * an ORDER BY computes its whole result before the first row, so those failures reach the first
   * `next()`; a later one (a lost connection mid-way) rejects the `next()` it interrupts.
   *
   * `timeoutMs` bounds the time spent waiting on the store, summed over the `next()` calls; the
   * time the consumer holds a row before asking for the next (a slow download) does not count.
   * Leaving the iteration early (`return()`, `break`) cancels the query and frees its connection.
   * Each iteration runs the query anew.
   */
  stream(query: StoreStreamQuery): AsyncIterable<StoreRow>;
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
