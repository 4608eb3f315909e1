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
  /**
   * Adds each amount without a limit, once for `onceKey`: the first call for it marks it (for
   * `onceTtlMs`) and adds, the later ones add nothing. Marking and adding are one atomic step, so
   * two processes serving the same click twice count it once. True when added.
   */
  addOnce(
    onceKey: string,
    onceTtlMs: number,
    adds: readonly { readonly key: string; readonly amount: number; readonly ttlMs: number }[],
  ): Promise<boolean>;
  /** The counts of the keys, 0 for a key never counted. */
  read(keys: readonly string[]): Promise<number[]>;
  close(): Promise<void>;
}
