import type { DeliveryCounters } from './delivery-counters.port';

interface Counter {
  value: number;
  expiresAt: number;
}

/** The embedded delivery counters: one process, where each call runs to its end before the next. */
export class MemoryDeliveryCounters implements DeliveryCounters {
  private readonly counters = new Map<string, Counter>();

  constructor(private readonly clock: () => number = Date.now) {}

  async reserve(
    limits: readonly { key: string; amount: number; limit: number; ttlMs: number }[],
  ): Promise<number> {
    return this.reserveNow(limits);
  }

  /** `reserve` without the promise, for a simulated clock that needs no event loop turn. */
  reserveNow(limits: readonly { key: string; amount: number; limit: number; ttlMs: number }[]): number {
    for (let i = 0; i < limits.length; i++) {
      if (this.value(limits[i].key) + limits[i].amount > limits[i].limit) {
        return i;
      }
    }
    for (const l of limits) {
      this.addNow(l.key, l.amount, l.ttlMs);
    }
    return -1;
  }

  async addOnce(
    onceKey: string,
    onceTtlMs: number,
    adds: readonly { key: string; amount: number; ttlMs: number }[],
  ): Promise<boolean> {
    if (this.value(onceKey) > 0) {
      return false;
    }
    this.addNow(onceKey, 1, onceTtlMs);
    for (const a of adds) {
      this.addNow(a.key, a.amount, a.ttlMs);
    }
    return true;
  }

  async read(keys: readonly string[]): Promise<number[]> {
    return keys.map((k) => this.value(k));
  }

  /** The count of one key now. */
  value(key: string): number {
    const counter = this.counters.get(key);
    if (!counter) {
      return 0;
    }
    if (counter.expiresAt <= this.clock()) {
      this.counters.delete(key);
      return 0;
    }
    return counter.value;
  }

  async close(): Promise<void> {
    this.counters.clear();
  }

  private addNow(key: string, amount: number, ttlMs: number): void {
    const value = this.value(key);
    const counter = this.counters.get(key);
    if (counter) {
      counter.value = value + amount;
    } else {
      this.counters.set(key, { value: amount, expiresAt: this.clock() + ttlMs });
    }
  }
}
