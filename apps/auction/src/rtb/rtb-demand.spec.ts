import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog, loadCatalog } from '@app/catalog';
import { DspSimulator } from '@app/dsp-simulator';
import { testAdContext } from '../core/ad-context.testing';
import { BidderClient } from './bidder.client';
import { DspTraffic } from './dsp-traffic';
import { RtbDemand } from './rtb-demand';

const TMAX_MS = 1000;
/** The simulated DSP answers this long after each request, well within its timeout (tmax). */
const LATENCY_MS = 400;

describe('RtbDemand: tmax runs from when the request was read', () => {
  let dsp: DspSimulator;
  let client: BidderClient;
  let catalog: Catalog;
  let rtb: RtbDemand;

  beforeAll(async () => {
    dsp = await DspSimulator.start({
      seat: 'alpha-1',
      bidRate: 1,
      latencyMs: { min: LATENCY_MS, max: LATENCY_MS },
    });
    const demo = loadCatalog().document;
    catalog = new Catalog({ ...demo, dsps: [{ ...demo.dsps[0], endpoint: dsp.bidUrl, timeoutMs: TMAX_MS }] });
    client = new BidderClient({ connectionsPerDsp: 2, maxResponseBytes: 65_536, hardTimeoutMs: 2000 });
    const traffic = new DspTraffic(catalog.document.dsps, {
      workers: 1,
      unhealthyFailureShare: 1,
      unhealthyTrafficShare: 1,
    });
    rtb = new RtbDemand(catalog, client, traffic, { tmaxMs: TMAX_MS, exchangeDomain: 'adx.example' });
  });

  afterAll(async () => {
    await client.close();
    await dsp.close();
  });

  /** One auction whose request was read `waitedMs` ago; its auction's own deadline is a full tmax. */
  async function collect(waitedMs: number) {
    const now = performance.now();
    const ctx = { ...testAdContext(catalog, 'slot-1-1-2'), arrivedAt: now - waitedMs };
    return rtb.collect(ctx, catalog.document.dsps, now + TMAX_MS, 2);
  }

  it('gives the DSP its whole timeout when the request was read just now', async () => {
    await collect(0); // the connection is opened
    const { records, candidates } = await collect(0);
    expect(records.map((r) => r.status)).toEqual(['lost']);
    expect(candidates).toHaveLength(1);
  });

  it('gives it only what is left of tmax since the read: here 30 ms, far less than it takes', async () => {
    const { records } = await collect(TMAX_MS - 30);
    expect(records.map((r) => r.status)).toEqual(['timeout']);
  });
});
