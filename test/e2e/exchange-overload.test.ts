import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** 300x250: direct, house and fallback demand besides RTB. */
const SLOT_WITH_CATALOG_DEMAND = 'slot-1-1-2';
/** 320x50: RTB is its only demand. */
const SLOT_RTB_ONLY = 'slot-1-2-2';

/**
 * Keeps the event loop busy (the app shares the test's process), as a burst of requests would:
 * each 250 ms block is a lag sample over the threshold, which takes the share let through down
 * by 30 %.
 */
function overload(blocks = 4): Promise<void> {
  return (async () => {
    for (let i = 0; i < blocks; i += 1) {
      const until = performance.now() + 250;
      while (performance.now() < until) {
        // Busy.
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
}

async function shed(url: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith('adx_auctions_shed_total{reason="overload"}'));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('exchange: under overload, auctions are shed to direct and house demand, never to an error', () => {
  let api: RunningReporting;
  let dsp: DspSimulator;
  let auctionUrl: string;

  beforeAll(async () => {
    dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 9, max: 9 } });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps = [{ ...doc.dsps[0], endpoint: dsp.bidUrl, timeoutMs: 1000 }];
    });
    api = await startReporting('embedded', {
      CATALOG_PATH: catalog,
      AUCTION_TMAX_MS: '1000',
      AUCTION_SHED_LAG_MS: '100',
    });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await dsp?.close();
  });

  it('serves a catalog ad at once, without asking the DSP, and counts the auction as shed', async () => {
    // Before the overload the DSP's 9.00 wins the slot.
    const calm = await request(`${auctionUrl}/img/${SLOT_WITH_CATALOG_DEMAND}?recipient=calm-reader-1`);
    await calm.body.dump();
    expect(calm.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/creative\//);
    const asked = dsp.stats().requests;
    const before = await shed(auctionUrl);
    await overload();
    const res = await request(`${auctionUrl}/img/${SLOT_WITH_CATALOG_DEMAND}?recipient=busy-reader-1`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(/\/creatives\/.+\.svg$/);
    expect(res.headers['server-timing']).toMatch(/^dsp;dur=0\.00,/);
    expect(dsp.stats().requests).toBe(asked);
    expect((await shed(auctionUrl)) - before).toBe(1);
  });

  it('keeps the auction of a slot whose only demand is RTB more often, and sheds it to the pixel', async () => {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const asked = dsp.stats().requests;
    const before = await shed(auctionUrl);
    // Two blocks: about half of the others go through, 70 % of these (more as the loop recovers).
    await overload(2);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const res = await request(`${auctionUrl}/img/${SLOT_RTB_ONLY}?recipient=busy-reader-rtb-${i}`);
      await res.body.dump();
      statuses.push(res.statusCode);
    }
    const auctioned = dsp.stats().requests - asked;
    expect(auctioned).toBeGreaterThanOrEqual(5);
    // A shed one has no other demand: the transparent pixel, never an error.
    expect(statuses.filter((s) => s === 302)).toHaveLength(auctioned);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10 - auctioned);
    expect((await shed(auctionUrl)) - before).toBe(10 - auctioned);
  });
});

async function throttled(url: string, dsp: string, reason: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`adx_dsp_throttled_total{dsp="${dsp}",reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('exchange: per-DSP traffic controls', () => {
  let api: RunningReporting;
  let capped: DspSimulator;
  let failing: DspSimulator;
  let auctionUrl: string;

  beforeAll(async () => {
    capped = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 5, max: 5 } });
    failing = await DspSimulator.start({ seat: 'beta-1', priceCpm: { min: 4, max: 4 } });
    failing.configure({ faults: { http_500: 1 } });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps[0] = { ...doc.dsps[0], endpoint: capped.bidUrl, timeoutMs: 1000, maxQps: 1 };
      doc.dsps[1] = { ...doc.dsps[1], endpoint: failing.bidUrl, timeoutMs: 1000 };
      doc.dsps = doc.dsps.slice(0, 2);
    });
    api = await startReporting('embedded', { CATALOG_PATH: catalog, AUCTION_TMAX_MS: '1000' });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await capped?.close();
    await failing?.close();
  });

  const open = async (recipient: string) => {
    const res = await request(`${auctionUrl}/img/${SLOT_WITH_CATALOG_DEMAND}?recipient=${recipient}`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
  };

  it('sends a DSP no more than its maxQps, and counts the requests it did not send', async () => {
    const asked = capped.stats().requests;
    const before = await throttled(auctionUrl, 'dsp-alpha', 'qps_cap');
    // Ten auctions at once: within the same second, one bid request goes out.
    await Promise.all(Array.from({ length: 10 }, (_, i) => open(`capped-reader-${i}`)));
    expect(capped.stats().requests - asked).toBe(1);
    expect((await throttled(auctionUrl, 'dsp-alpha', 'qps_cap')) - before).toBe(9);
  });

  it('gives a DSP that keeps failing a reduced share of the requests, then all of them once it recovers', async () => {
    for (let i = 0; i < 60; i += 1) {
      await open(`failing-reader-${i}`);
    }
    const sentWhileFailing = failing.stats().requests;
    for (let i = 60; i < 110; i += 1) {
      await open(`failing-reader-${i}`);
    }
    // The last 50 auctions asked it about a tenth of the time.
    expect(failing.stats().requests - sentWhileFailing).toBeLessThan(15);
    expect(await throttled(auctionUrl, 'dsp-beta', 'unhealthy')).toBeGreaterThan(30);
    // It answers again: the requests it still gets show it, and its share comes back.
    failing.configure({ faults: {} });
    for (let i = 110; i < 400 && failing.stats().requests - sentWhileFailing < 60; i += 1) {
      await open(`failing-reader-${i}`);
    }
    const recovered = failing.stats().requests;
    for (let i = 0; i < 10; i += 1) {
      await open(`recovered-reader-${i}`);
    }
    expect(failing.stats().requests - recovered).toBe(10);
  });
});
