import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateStore } from '@app/state-store';

/** What every state store adapter must do; `sleep` waits long enough for TTLs to lapse. */
export function stateStoreContract(name: string, create: () => Promise<StateStore>): void {
  describe(`state store contract: ${name}`, () => {
    let store: StateStore;
    const key = (k: string) => `contract:${process.pid}:${Date.now()}:${k}`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    beforeEach(async () => {
      store = await create();
    });
    afterEach(async () => {
      await store.close();
    });

    it('sets, gets and deletes', async () => {
      const k = key('a');
      expect(await store.get(k)).toBeUndefined();
      await store.set(k, 'v1');
      expect(await store.get(k)).toBe('v1');
      await store.delete(k);
      expect(await store.get(k)).toBeUndefined();
    });

    it('expires values after their TTL', async () => {
      const k = key('ttl');
      await store.set(k, 'v', 50);
      expect(await store.get(k)).toBe('v');
      await sleep(120);
      expect(await store.get(k)).toBeUndefined();
    });

    it('sets if absent only once', async () => {
      const k = key('nx');
      expect(await store.setIfAbsent(k, 'first', 10_000)).toBe(true);
      expect(await store.setIfAbsent(k, 'second', 10_000)).toBe(false);
      expect(await store.get(k)).toBe('first');
    });

    it('increments atomically under concurrency and keeps the first TTL', async () => {
      const k = key('inc');
      const results = await Promise.all(Array.from({ length: 50 }, () => store.increment(k, 80)));
      expect([...results].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      await sleep(150);
      expect(await store.increment(k, 80)).toBe(1);
    });

    it('advances a number only upwards, one winner among racers', async () => {
      const k = key('adv');
      expect(await store.advanceIfGreater(k, 100, 10_000)).toBe(true);
      expect(await store.advanceIfGreater(k, 100, 10_000)).toBe(false);
      expect(await store.advanceIfGreater(k, 99, 10_000)).toBe(false);
      const racers = await Promise.all(
        Array.from({ length: 20 }, () => store.advanceIfGreater(k, 150, 10_000)),
      );
      expect(racers.filter(Boolean)).toHaveLength(1);
      expect(await store.get(k)).toBe('150');
    });

    it('raises a TTL, never lowers it, and leaves a missing key missing', async () => {
      const short = key('extend-short');
      await store.set(short, 'v', 60);
      await store.extendTtl(short, 10_000);
      const long = key('extend-long');
      await store.set(long, 'v', 60);
      await store.extendTtl(long, 10);
      await store.extendTtl(key('extend-missing'), 10_000);
      await sleep(150);
      expect(await store.get(short)).toBe('v');
      expect(await store.get(long)).toBeUndefined();
      expect(await store.get(key('extend-missing'))).toBeUndefined();
      const forever = key('extend-forever');
      await store.set(forever, 'v');
      await store.extendTtl(forever, 10);
      await sleep(50);
      expect(await store.get(forever)).toBe('v');
      await store.delete(forever);
    });
  });
}
