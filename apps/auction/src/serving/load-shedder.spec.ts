import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '@app/config';
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

  it('lets every auction through while the event loop keeps up', async () => {
    // A threshold no scheduling hiccup of a busy test machine reaches.
    const s = start({ AUCTION_SHED_LAG_MS: '1000' });
    await sleep(50);
    expect(Array.from({ length: 100 }, () => s.admit(true)).every(Boolean)).toBe(true);
    expect(s.state()).toMatchObject({ share: 1, inFlight: 100 });
  });

  it('sheds a share of the auctions that have other demand while the loop runs late, then recovers', async () => {
    const s = start({});
    await sleep(30);
    for (let i = 0; i < 4; i += 1) {
      block(100);
      await sleep(2);
    }
    const { share } = s.state();
    expect(share).toBeLessThan(0.5);
    const admitted = Array.from({ length: 200 }, () => s.admit(true)).filter(Boolean).length;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThan(200 * share + 2);
    // A slot without other demand keeps its auction more often: the square root of the share.
    const rtbOnly = Array.from({ length: 200 }, () => s.admit(false)).filter(Boolean).length;
    expect(rtbOnly).toBeGreaterThan(admitted);
    expect(rtbOnly).toBeLessThan(200 * Math.sqrt(s.state().share) + 2);
    for (let waited = 0; s.state().share < 1 && waited < 10_000; waited += 50) {
      await sleep(50);
    }
    expect(s.state().share).toBe(1);
  });

  it('sheds every auction past the cap on auctions in flight, until some end', () => {
    const s = start({ AUCTION_MAX_IN_FLIGHT: '3' });
    expect([1, 2, 3, 4].map(() => s.admit(false))).toEqual([true, true, true, false]);
    s.release();
    expect(s.admit(true)).toBe(true);
  });

  it('never sheds on lag with AUCTION_SHED_LAG_MS=0', async () => {
    const s = start({ AUCTION_SHED_LAG_MS: '0' });
    block(60);
    await sleep(20);
    expect(s.state().share).toBe(1);
    expect(s.admit(true)).toBe(true);
  });
});
