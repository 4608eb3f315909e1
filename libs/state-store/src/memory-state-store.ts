import type { StateStore } from './state-store.port';

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * The embedded state store. Single-threaded JavaScript makes each operation atomic; expired
 * entries are dropped when read and swept periodically so memory stays bounded.
 */
export class MemoryStateStore implements StateStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clock: () => number = Date.now,
    sweepIntervalMs = 30_000,
  ) {
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  async get(key: string): Promise<string | undefined> {
    return this.live(key)?.value;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: this.expiry(ttlMs) });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) {
      return false;
    }
    this.entries.set(key, { value, expiresAt: this.expiry(ttlMs) });
    return true;
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    const entry = this.live(key);
    const next = (entry ? Number(entry.value) : 0) + 1;
    this.entries.set(key, { value: String(next), expiresAt: entry ? entry.expiresAt : this.expiry(ttlMs) });
    return next;
  }

  async advanceIfGreater(key: string, value: number, ttlMs: number): Promise<boolean> {
    const entry = this.live(key);
    if (entry && Number(entry.value) >= value) {
      return false;
    }
    this.entries.set(key, { value: String(value), expiresAt: this.expiry(ttlMs) });
    return true;
  }

  async extendTtl(key: string, ttlMs: number): Promise<void> {
    const entry = this.live(key);
    if (entry) {
      entry.expiresAt = Math.max(entry.expiresAt, this.expiry(ttlMs));
    }
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
  }

  private expiry(ttlMs: number | undefined): number {
    return ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock() + ttlMs;
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      return undefined;
    }
    if (entry.expiresAt <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.clock();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(key);
      }
    }
  }
}
