import type { CounterLimit } from './booked-layer';

export const DELIVERY_COUNTERS = Symbol('DELIVERY_COUNTERS');

/**
 * Where deliveries are counted: in memory for one process (the embedded mode), in Redis for all
 * the auction processes (the distributed mode). `reserve` is atomic, so that racing processes
 * never push a counter past its limit.
 */
export interface DeliveryCounters {
  /**
   * Adds each amount when every counter stays within its limit, all of them or none; -1 when
   * added, else the index of the first counter that would have passed its limit.
   */
  reserve(limits: readonly Pick<CounterLimit, 'key' | 'amount' | 'limit' | 'ttlMs'>[]): Promise<number>;
  /** Adds to a counter without a limit (a click on a booked ad). */
  add(key: string, amount: number, ttlMs: number): Promise<void>;
  /** The counts of the keys, 0 for a key never counted. */
  read(keys: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}
