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
 * each 250 ms block is a lag sample over the threshold, which cuts the limit on auctions in flight
 * (none are: down to one).
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

  /** Ten readers at once, on the same slot: what each got, and whether an auction ran for it. */
  async function burst(slot: string, prefix: string) {
    return Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await request(`${auctionUrl}/img/${slot}?recipient=${prefix}-${i}`);
        await res.body.dump();
        const timing = String(res.headers['server-timing']);
        return {
          status: res.statusCode,
          location: res.headers.location as string | undefined,
          auctioned: !timing.startsWith('dsp;dur=0.00,'),
        };
      }),
    );
  }

  it('serves catalog ads at once, without asking the DSP, to the auctions past the limit, counted as shed', async () => {
    // Before the overload the DSP's 9.00 wins the slot.
    const calm = await request(`${auctionUrl}/img/${SLOT_WITH_CATALOG_DEMAND}?recipient=calm-reader-1`);
    await calm.body.dump();
    expect(calm.headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/creative\//);
    const asked = dsp.stats().requests;
    const before = await shed(auctionUrl);
    await overload();
    const answers = await burst(SLOT_WITH_CATALOG_DEMAND, 'busy-reader');
    const shedAnswers = answers.filter((a) => !a.auctioned);
    expect(shedAnswers.length).toBeGreaterThan(0);
    expect(answers.every((a) => a.status === 302)).toBe(true);
    for (const a of shedAnswers) {
      expect(a.location).toMatch(/\/creatives\/.+\.svg$/);
    }
    expect(dsp.stats().requests - asked).toBe(10 - shedAnswers.length);
    expect((await shed(auctionUrl)) - before).toBe(shedAnswers.length);
  });

  it('sheds an RTB-only slot past its (larger) room to the transparent pixel, never an error', async () => {
    const asked = dsp.stats().requests;
    const before = await shed(auctionUrl);
    await overload();
    const answers = await burst(SLOT_RTB_ONLY, 'busy-reader-rtb');
    const auctioned = answers.filter((a) => a.auctioned).length;
    expect(auctioned).toBeGreaterThan(0);
    expect(dsp.stats().requests - asked).toBe(auctioned);
    // A shed one has no other demand: the transparent pixel.
    expect(answers.filter((a) => a.status === 302)).toHaveLength(auctioned);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10 - auctioned);
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
