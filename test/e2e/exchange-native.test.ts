import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator, type DspFault } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { validateBidRequestAgainstSchema } from '@app/testing';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** The demo catalog's native slot: pub-1, 300x250. */
const SLOT = 'slot-1-1-3';

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(bytes: Buffer): { w: number; h: number } {
  expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
}

async function metric(url: string, labels: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith(`adx_dsp_answers_total{${labels}}`) || l.startsWith(`adx_dsp_answers_total{${labels},`),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('exchange: Native 1.1 ads, static and flattened, and the native answers refused', () => {
  let api: RunningReporting;
  let alpha: DspSimulator;
  let beta: DspSimulator;
  let auctionUrl: string;
  let readers = 0;

  const open = async (path: string) => {
    const res = await request(`${auctionUrl}${path}`);
    await res.body.dump();
    return { status: res.statusCode, location: res.headers.location as string | undefined };
  };

  beforeAll(async () => {
    alpha = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 9, max: 9 }, native: 'real' });
    beta = await DspSimulator.start({ seat: 'beta-1', priceCpm: { min: 6, max: 6 }, native: 'static' });
    const catalog = writeTestCatalog((doc) => {
      doc.dsps[0].endpoint = alpha.bidUrl;
      doc.dsps[0].nativeRequestForm = 'object';
      doc.dsps[1].endpoint = beta.bidUrl;
      doc.dsps[1].nativeRequestForm = 'string';
      for (const dsp of doc.dsps) {
        dsp.timeoutMs = 1000;
      }
    });
    api = await startReporting('embedded', {
      CATALOG_PATH: catalog,
      AUCTION_TMAX_MS: '1000',
      DSP_URL_ALLOW_PRIVATE: '1',
      NATIVE_IMAGE_TIMEOUT_MS: '700',
    });
    auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await alpha?.close();
    await beta?.close();
  });

  it("asks for a native ad in the spec's object form or in the string form the DSP chose", async () => {
    await open(`/img/${SLOT}?recipient=native-form-${readers++}`);
    const toAlpha = alpha.requests.at(-1)!.body as any;
    const toBeta = beta.requests.at(-1)!.body as any;
    expect(toAlpha.imp[0].banner).toBeUndefined();
    expect(toAlpha.imp[0].native.ver).toBe('1.1');
    expect(toAlpha.imp[0].native.request.assets.map((a: any) => a.id)).toEqual([1, 2, 3, 4, 5]);
    expect(toAlpha.imp[0].native.request.assets[0].title.len).toBe(140);
    expect(typeof toBeta.imp[0].native.request).toBe('string');
    expect(JSON.parse(toBeta.imp[0].native.request)).toEqual(toAlpha.imp[0].native.request);
    expect(validateBidRequestAgainstSchema(toBeta)).toEqual([]);
  });

  it("flattens a real native ad into one PNG of the slot's size, clicks to its link, fires its trackers", async () => {
    await api.system.settle();
    alpha.reset();
    const recipient = `native-real-${readers++}`;
    const res = await open(`/img/${SLOT}?recipient=${recipient}`);
    expect(res.location).toMatch(new RegExp(`^${auctionUrl}/native/[A-Za-z0-9_-]+\\.png$`));
    const image = await request(res.location!);
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(pngSize(Buffer.from(await image.body.arrayBuffer()))).toEqual({ w: 300, h: 250 });
    const click = await open(`/click/${SLOT}?recipient=${recipient}`);
    expect(click.location!.startsWith(`${alpha.url}/landing`)).toBe(true);
    await api.system.settle();
    expect(alpha.trackerHits.filter((h) => h.kind === 'imp')).toHaveLength(2);
    expect(alpha.trackerHits.filter((h) => h.kind === 'click')).toHaveLength(1);
  });

  it('serves a static native ad as its own image', async () => {
    alpha.configure({ bidRate: 0 });
    const res = await open(`/img/${SLOT}?recipient=native-static-${readers++}`);
    expect(res.location!.startsWith(`${beta.url}/creative/300x250.png`)).toBe(true);
    alpha.configure({ bidRate: 1 });
  });

  it.each([
    ['native_title_too_long', 'title_too_long'],
    ['native_missing_assets', 'incomplete_native'],
    ['native_wrong_ids', 'unknown_asset'],
    ['native_bad_link', 'invalid_link'],
    ['native_price_macro_tracker', 'price_macro_in_tracker'],
    ['native_not_json', 'malformed_native'],
    ['native_image_never_answers', 'image_timeout'],
    ['native_huge_image', 'image_too_large'],
  ] as const)('refuses %s with %s and serves the next best ad', async (fault, reason) => {
    alpha.configure({ faults: { [fault as DspFault]: 1 } });
    const labels = `dsp="dsp-alpha",status="rejected",reason="${reason}"`;
    const before = await metric(auctionUrl, labels);
    const res = await open(`/img/${SLOT}?recipient=native-${fault}-${readers++}`);
    expect(res.status).toBe(302);
    expect(res.location!.startsWith(`${beta.url}/creative/`)).toBe(true);
    expect((await metric(auctionUrl, labels)) - before).toBe(1);
    alpha.configure({ faults: {} });
  });
});
