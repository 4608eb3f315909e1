export const STATE_STORE = Symbol('STATE_STORE');

/**
 * Small, short-lived shared state: seeds, rate-limit counters, ad decisions, sync matches.
 * Every operation that two app instances could race on is atomic.
 */
export interface StateStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets the value only when the key is absent; true when it was set. */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  /** Increments a counter, creating it at 1 with the TTL when absent; returns the new value. */
  increment(key: string, ttlMs: number): Promise<number>;
  /**
   * Stores `value` only when it is greater than the stored number (or none is stored); true when
   * stored. The TTL is renewed on success.
   */
  advanceIfGreater(key: string, value: number, ttlMs: number): Promise<boolean>;
  /**
   * Makes the key live at least `ttlMs` from now: its TTL is raised, never lowered (a key without
   * a TTL keeps living for good); nothing happens to a key that does not exist.
   */
  extendTtl(key: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
