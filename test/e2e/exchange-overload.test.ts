import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** 300x250: direct, house and fallback demand besides RTB. */
const SLOT_WITH_CATALOG_DEMAND = 'slot-1-1-2';
/** 320x50: RTB is its only demand. */
const SLOT_RTB_ONLY = 'slot-1-2-2';

/** Keeps the event loop busy (the app shares the test's process), as a burst of requests would. */
function overload(): Promise<void> {
  return (async () => {
    for (let i = 0; i < 4; i += 1) {
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

  it('keeps the auction of a slot whose only demand is RTB', async () => {
    const asked = dsp.stats().requests;
    await overload();
    const res = await request(`${auctionUrl}/img/${SLOT_RTB_ONLY}?recipient=busy-reader-2`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(dsp.stats().requests).toBe(asked + 1);
  });
});
