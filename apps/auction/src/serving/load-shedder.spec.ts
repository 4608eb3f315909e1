import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@app/config';
import { auctionsShed } from '@app/observability';
import { AuctionConfig } from '../auction.config';
import { LoadShedder } from './load-shedder';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Keeps the event loop busy, as a burst of requests would. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy.
  }
}

/** Keeps the event loop busy for `ms`, a turn of `turnMs` at a time, as a stream of requests would. */
async function saturate(ms: number, turnMs = 15): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    block(turnMs);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('LoadShedder', () => {
  let shedder: LoadShedder | undefined;
  afterEach(() => shedder?.onApplicationShutdown());

  /** A shedder fed the samples a test gives it (`observe`), unless `sampling` starts its own. */
  const start = (env: Record<string, string> = {}, sampling = false) => {
    shedder = new LoadShedder(loadConfig(AuctionConfig, env));
    if (sampling) {
      shedder.onModuleInit();
    }
    return shedder;
  };
  const admitted = (s: LoadShedder, n: number, fallback = true) =>
    Array.from({ length: n }, () => s.admit(fallback)).filter(Boolean).length;
  const shed = async (reason: string) =>
    (await auctionsShed.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  /**
   * 330 ms of a loop busy all the time and 12 ms late at each sample: its busy share averaged over
   * 100 ms reaches 90 % at the 10th sample (1 - 0.78^10), saturated from then on.
   */
  const saturateSamples = (s: LoadShedder) => {
    for (let i = 0; i < 15; i += 1) {
      s.observe(12, 1, 22);
    }
  };

  it('lets every auction through while the event loop keeps up', () => {
    const s = start();
    for (let i = 0; i < 20; i += 1) {
      s.observe(1, 0.3, 11);
    }
    expect(admitted(s, 100)).toBe(100);
    expect(s.state()).toMatchObject({ limit: 1000, inFlight: 100, saturated: false });
  });

  it('lets bursts through: a loop that lags but idles between them is not saturated', async () => {
    const s = start();
    expect(admitted(s, 40)).toBe(40);
    const lateBefore = await shed('late');
    for (let burst = 0; burst < 20; burst += 1) {
      // 40 requests read and answered in one 30 ms turn, then the DSPs' time, the loop idle.
      s.observe(30, 1, 40);
      for (let i = 0; i < 4; i += 1) {
        s.observe(0, 0.1, 10);
      }
      // Read 10 ms before its auction could begin: over the 5 ms allowed, but the loop idles.
      expect(s.admit(true, performance.now() - 10)).toBe(true);
      s.release();
    }
    expect(s.state()).toMatchObject({ limit: 1000, saturated: false });
    expect(await shed('late')).toBe(lateBefore);
  });

  it('limits the auctions in flight on a saturated loop, RTB-only slots with more room, then recovers', () => {
    const s = start();
    expect(admitted(s, 40)).toBe(40);
    saturateSamples(s);
    // Each late sample on the saturated loop (the last 6) cut the limit to 80 %, from the 40 in flight.
    const { limit, saturated } = s.state();
    expect(saturated).toBe(true);
    expect(limit).toBeCloseTo(40 * 0.8 ** 6);
    expect(admitted(s, 10)).toBe(0);
    for (let i = 0; i < 40; i += 1) {
      s.release();
    }
    expect(admitted(s, 100)).toBe(Math.ceil(limit));
    // A slot without other demand has half again the room.
    expect(admitted(s, 100, false)).toBe(Math.ceil(limit * 1.5 + 1) - Math.ceil(limit));
    for (let i = 0; i < 100; i += 1) {
      s.release();
    }
    // The loop is on time again: while the limit binds, it rises back.
    for (let i = 0; i < 200 && s.state().limit < 60; i += 1) {
      admitted(s, 10);
      s.observe(1, 0.6, 11);
    }
    expect(s.state().limit).toBeGreaterThanOrEqual(60);
  });

  it('sheds every auction past AUCTION_MAX_IN_FLIGHT, until some end', () => {
    const s = start({ AUCTION_MAX_IN_FLIGHT: '3' });
    expect([1, 2, 3, 4].map(() => s.admit(false))).toEqual([true, true, true, false]);
    s.release();
    expect(s.admit(true)).toBe(true);
  });

  it('sheds a request that waited past the lag allowed on a saturated loop, whatever is in flight', async () => {
    const s = start();
    const before = await shed('late');
    // Past the 5 ms allowed but under 4 x 5: in time on a loop that keeps up.
    expect(s.admit(true, performance.now() - 10)).toBe(true);
    saturateSamples(s);
    const readAt = performance.now() - 10;
    expect(s.admit(true, readAt)).toBe(false);
    expect(s.admit(false, readAt)).toBe(false);
    expect(await shed('late')).toBe(before + 2);
    // A request read now is not late (the limit may still hold it back).
    s.admit(true, performance.now());
    expect(await shed('late')).toBe(before + 2);
  });

  it('sheds a request that waited four times the lag allowed even on a loop that keeps up', async () => {
    const s = start();
    const before = await shed('late');
    expect(s.admit(true, performance.now() - 19)).toBe(true);
    expect(s.admit(true, performance.now() - 25)).toBe(false);
    expect(await shed('late')).toBe(before + 1);
  });

  it('samples the real event loop: a stream of long turns saturates it', async () => {
    const s = start({}, true);
    expect(admitted(s, 40)).toBe(40);
    await saturate(300);
    await sleep(1);
    expect(s.state().saturated).toBe(true);
    expect(s.state().limit).toBeLessThan(40);
  });

  it('never sheds on lag with AUCTION_SHED_LAG_MS=0', async () => {
    const s = start({ AUCTION_SHED_LAG_MS: '0' }, true);
    const readAt = performance.now();
    expect(admitted(s, 5)).toBe(5);
    await saturate(150);
    await sleep(20);
    expect(s.state().limit).toBe(1000);
    expect(s.admit(true, readAt)).toBe(true);
  });
});
