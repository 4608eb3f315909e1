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

describe('LoadShedder', () => {
  let shedder: LoadShedder | undefined;
  afterEach(() => shedder?.onApplicationShutdown());

  const start = (env: Record<string, string>) =>
    (shedder = new LoadShedder(loadConfig(AuctionConfig, { AUCTION_SHED_LAG_MS: '40', ...env })));
  const admitted = (s: LoadShedder, n: number, fallback = true) =>
    Array.from({ length: n }, () => s.admit(fallback)).filter(Boolean).length;

  it('lets every auction through while the event loop keeps up', async () => {
    // A threshold no scheduling hiccup of a busy test machine reaches.
    const s = start({ AUCTION_SHED_LAG_MS: '1000' });
    await sleep(50);
    expect(admitted(s, 100)).toBe(100);
    expect(s.state()).toMatchObject({ limit: 1000, inFlight: 100 });
  });

  it('limits the auctions in flight while the loop runs late, RTB-only slots with more room, then recovers', async () => {
    const s = start({});
    await sleep(30);
    expect(admitted(s, 40)).toBe(40);
    block(100);
    await sleep(2);
    // The late sample cut the limit to 80 % of the 40 in flight (quiet samples since may have
    // raised it a little: it binds).
    const { limit } = s.state();
    expect(limit).toBeLessThan(36);
    expect(admitted(s, 10)).toBe(0);
    // A slot without other demand has half again the room.
    expect(admitted(s, 100, false)).toBe(Math.ceil(limit * 1.5 + 1) - 40);
    for (let i = 0; i < 100; i += 1) {
      s.release();
    }
    // The loop is quiet again: while the limit binds, it rises back.
    for (let waited = 0; s.state().limit < 60 && waited < 10_000; waited += 20) {
      admitted(s, 10);
      await sleep(20);
    }
    expect(s.state().limit).toBeGreaterThanOrEqual(60);
  });

  it('sheds every auction past AUCTION_MAX_IN_FLIGHT, until some end', () => {
    const s = start({ AUCTION_MAX_IN_FLIGHT: '3' });
    expect([1, 2, 3, 4].map(() => s.admit(false))).toEqual([true, true, true, false]);
    s.release();
    expect(s.admit(true)).toBe(true);
  });

  it('sheds a request that waited past the lag allowed before its auction, whatever is in flight', async () => {
    const late = async () =>
      (await auctionsShed.get()).values.find((v) => v.labels.reason === 'late')?.value ?? 0;
    const s = start({});
    const before = await late();
    const readAt = performance.now();
    expect(s.admit(true, readAt)).toBe(true);
    // The state lookups of this request took 50 ms on a loop running late: past the 40 allowed.
    block(50);
    expect(s.admit(true, readAt)).toBe(false);
    expect(s.admit(false, readAt)).toBe(false);
    expect(await late()).toBe(before + 2);
    // A request read now is in time, and the one auction admitted is still in flight.
    expect(s.admit(true, performance.now())).toBe(true);
    expect(s.state().inFlight).toBe(2);
  });

  it('never sheds on lag with AUCTION_SHED_LAG_MS=0', async () => {
    const s = start({ AUCTION_SHED_LAG_MS: '0' });
    const readAt = performance.now();
    expect(admitted(s, 5)).toBe(5);
    block(60);
    await sleep(20);
    expect(s.state().limit).toBe(1000);
    expect(s.admit(true, readAt)).toBe(true);
  });
});
