import { afterEach, describe, expect, it, vi } from 'vitest';
import { Random } from '@app/demo-traffic';
import { DspSimulator } from './dsp-simulator';
import type { DspSimulatorOptions, NativeFault } from './dsp-simulator.settings';
import { HANG_PATH, JAVASCRIPT_LINK, TITLE_OVERRUN } from './native.faults';
import { HUGE_IMAGE_BYTES } from './png.renderer';
import { get, ioUntil, post, pngSize, readFor, type Answer, type Parsed } from './simulator.testing';

const running: DspSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((simulator) => simulator.close()));
});

async function simulator(options: DspSimulatorOptions = {}, seed = 42): Promise<DspSimulator> {
  const random = new Random(seed);
  const started = await DspSimulator.start({ random: () => random.next(), ...options });
  running.push(started);
  return started;
}

/** The exchange's native request for a 300x250 slot: five assets, ids 1 to 5, none required. */
function nativeRequest(assets: unknown[] = EMAIL_ASSETS): Record<string, unknown> {
  return { ver: '1.1', context: 1, plcmttype: 1, assets };
}

const EMAIL_ASSETS = [
  { id: 1, required: 0, title: { len: 140 } },
  { id: 2, required: 0, img: { type: 3, wmin: 150, hmin: 125, mimes: ['image/png'] } },
  { id: 3, required: 0, data: { type: 2, len: 200 } },
  { id: 4, required: 0, data: { type: 1, len: 25 } },
  { id: 5, required: 0, img: { type: 505, w: 300, h: 250, mimes: ['image/png'] } },
];

function nativeBidRequest(
  request: unknown = nativeRequest(),
  extraImps: unknown[] = [],
  id = 'auction-1',
): Record<string, unknown> {
  return { id, imp: [{ id: 'imp-n', native: { request, ver: '1.1' } }, ...extraImps] };
}

/** The native response of a bid's markup, with or without its `native` wrapper. */
function nativeOf(bid: { adm: string }, wrapped = true): Parsed {
  const markup = JSON.parse(bid.adm);
  if (!wrapped) {
    return markup;
  }
  expect(Object.keys(markup)).toEqual(['native']);
  return markup.native;
}

const bidsOf = (answer: Answer): Parsed[] => answer.json().seatbid[0].bid;
const assetIds = (native: Parsed): number[] => native.assets.map((a: { id: number }) => a.id);
const substitute = (url: string) =>
  url
    .replaceAll('${AUCTION_ID}', 'auction-1')
    .replaceAll('${AUCTION_IMP_ID}', 'imp-n')
    .replaceAll('${AUCTION_PRICE}', '1.25');

describe('DspSimulator: native answers', () => {
  it('answers a real native ad filling title, main image, description and sponsor, in the native wrapper', async () => {
    const sim = await simulator({ seat: 'alpha-1', adomain: ['alpha.example'] });
    const answer = await post(sim, nativeBidRequest());

    expect(answer.status).toBe(200);
    const [bid] = bidsOf(answer);
    expect(bid).toMatchObject({ impid: 'imp-n', crid: 'alpha-1-native', adid: 'alpha-1-native' });
    const native = nativeOf(bid);
    expect(native.ver).toBe('1.1');
    expect(native.assets).toEqual([
      { id: 1, title: { text: 'alpha.example: picks of the week' } },
      {
        id: 2,
        img: { url: `${sim.url}/native-image/150x125.png?crid=alpha-1-native`, w: 150, h: 125 },
      },
      { id: 3, data: { value: expect.stringContaining('alpha-1') } },
      { id: 4, data: { value: 'alpha.example' } },
    ]);
    expect(native.assets[2].data.value.length).toBeLessThanOrEqual(200);
    expect(native.link).toEqual({
      url: `${sim.url}/landing?crid=alpha-1-native&imp=\${AUCTION_IMP_ID}`,
      clicktrackers: [`${sim.url}/click?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}&crid=alpha-1-native`],
    });
    expect(native.imptrackers).toHaveLength(2);
    for (const tracker of native.imptrackers) {
      expect(tracker.startsWith(`${sim.url}/imp?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}`)).toBe(true);
      expect(tracker).not.toContain('AUCTION_PRICE');
    }
    expect(sim.stats()).toMatchObject({ requests: 1, bids: 1, nativeBids: 1 });
  });

  it('reads the native request given as a JSON string, the OpenRTB 2.5 form, alike', async () => {
    const sim = await simulator();
    const asObject = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
    const asString = nativeOf(bidsOf(await post(sim, nativeBidRequest(JSON.stringify(nativeRequest()))))[0]);

    expect(asString).toEqual(asObject);
  });

  it('tolerates a Native 1.0 request wrapped in {"native":...} and the spec table spelling `asset`', async () => {
    const sim = await simulator();
    const wrapped = JSON.stringify({ native: nativeRequest() });
    const singular = { ver: '1.1', asset: EMAIL_ASSETS };

    expect(assetIds(nativeOf(bidsOf(await post(sim, nativeBidRequest(wrapped)))[0]))).toEqual([1, 2, 3, 4]);
    expect(assetIds(nativeOf(bidsOf(await post(sim, nativeBidRequest(singular)))[0]))).toEqual([1, 2, 3, 4]);
  });

  it('keeps texts within their len, and sizes the main image as asked, exactly or at least', async () => {
    const sim = await simulator({ seat: 'a-seat-with-a-rather-long-name', adomain: ['brand.example'] });
    const native = nativeOf(
      bidsOf(
        await post(
          sim,
          nativeBidRequest(
            nativeRequest([
              { id: 7, title: { len: 10 } },
              { id: 8, img: { type: 3, w: 640, h: 480, wmin: 10, hmin: 10 } },
              { id: 9, data: { type: 2, len: 12 } },
              { id: 10, data: { type: 1, len: 5 } },
            ]),
          ),
        ),
      )[0],
    );

    const [title, image, description, sponsored] = native.assets;
    // Cut within len code points, at a word end when one is near, and marked as cut.
    expect(title).toEqual({ id: 7, title: { text: 'brand.exa\u2026' } });
    expect(image.img).toMatchObject({ w: 640, h: 480 });
    expect(image.img.url).toContain('/native-image/640x480.png?');
    expect(description.data.value).toBe('A simulated\u2026');
    expect(sponsored).toEqual({ id: 10, data: { value: 'bran\u2026' } });
  });

  it('gives the main image a default size when the request names none', async () => {
    const sim = await simulator();
    const native = nativeOf(
      bidsOf(await post(sim, nativeBidRequest(nativeRequest([{ id: 1, img: { type: 3 } }]))))[0],
    );
    expect(native.assets[0].img).toMatchObject({ w: 600, h: 314 });
  });

  it('answers a static native ad, its 505 image alone, of the slot size from the PNG creative', async () => {
    const sim = await simulator({ native: 'static', seat: 'beta-1' });
    const [bid] = bidsOf(await post(sim, nativeBidRequest()));
    const native = nativeOf(bid);

    expect(bid.crid).toBe('beta-1-native-300x250');
    expect(native.assets).toEqual([
      { id: 5, img: { url: `${sim.url}/creative/300x250.png?crid=beta-1-native-300x250`, w: 300, h: 250 } },
    ]);
    expect(native.link.url).toBe(`${sim.url}/landing?crid=beta-1-native-300x250&imp=\${AUCTION_IMP_ID}`);
    expect(native.imptrackers).toHaveLength(2);
  });

  it('alternates real and static answers under mixed, and restarts the alternation on reset()', async () => {
    const sim = await simulator({ native: 'mixed' });
    const kinds = async (n: number) => {
      const seen: string[] = [];
      for (let i = 0; i < n; i += 1) {
        const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
        seen.push(assetIds(native).includes(5) ? 'static' : 'real');
      }
      return seen;
    };

    expect(await kinds(3)).toEqual(['real', 'static', 'real']);
    sim.reset();
    expect(await kinds(2)).toEqual(['real', 'static']);
  });

  it('puts the bare native response into adm when the wrapper is off', async () => {
    const sim = await simulator({ nativeWrapper: false });
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0], false);

    expect(native).not.toHaveProperty('native');
    expect(assetIds(native)).toEqual([1, 2, 3, 4]);
    expect(native.link.url).toContain('/landing?');
  });

  it.each<[string, DspSimulatorOptions, unknown[], number[]]>([
    [
      'static, without a 505 asset, answers real',
      { native: 'static' },
      EMAIL_ASSETS.slice(0, 4),
      [1, 2, 3, 4],
    ],
    ['real, with only a 505 asset, answers static', { native: 'real' }, EMAIL_ASSETS.slice(4), [5]],
    [
      'static, when the title is required, answers real',
      { native: 'static' },
      [{ ...EMAIL_ASSETS[0], required: 1 }, ...EMAIL_ASSETS.slice(1)],
      [1, 2, 3, 4],
    ],
    [
      'real, when the 505 image is required, answers static',
      { native: 'real' },
      [...EMAIL_ASSETS.slice(0, 4), { ...EMAIL_ASSETS[4], required: 1 }],
      [5],
    ],
  ])('%s', async (_name, options, assets, ids) => {
    const sim = await simulator(options);
    expect(assetIds(nativeOf(bidsOf(await post(sim, nativeBidRequest(nativeRequest(assets))))[0]))).toEqual(
      ids,
    );
  });

  it.each<[string, unknown]>([
    ['an empty native request', '{}'],
    ['a native request that is not JSON', '{"assets":['],
    [
      'a native request without known assets',
      nativeRequest([
        { id: 1, video: {} },
        { id: 2, img: { type: 1 } },
      ]),
    ],
    [
      'a required asset no answer fills',
      nativeRequest([EMAIL_ASSETS[0], { id: 2, img: { type: 1 }, required: 1 }]),
    ],
    [
      'a main image beyond any image',
      nativeRequest([{ id: 1, img: { type: 3, w: 5000, h: 5000 }, required: 1 }]),
    ],
  ])('does not bid on %s', async (_name, request) => {
    const sim = await simulator();
    expect((await post(sim, nativeBidRequest(request))).status).toBe(204);
    expect(sim.stats()).toMatchObject({ noBids: 1, nativeBids: 0 });
  });

  it('answers a banner to an imp whose native request it cannot fill, and natives beside banners', async () => {
    const sim = await simulator();
    const answer = await post(sim, {
      id: 'auction-1',
      imp: [
        { id: 'both', banner: { w: 728, h: 90 }, native: { request: '{}' } },
        { id: 'native', native: { request: nativeRequest() } },
        { id: 'banner', banner: { w: 300, h: 250 } },
      ],
    });
    const [both, native, banner] = bidsOf(answer);

    expect(both.adm).toContain('/creative/728x90.svg');
    expect(assetIds(nativeOf(native))).toEqual([1, 2, 3, 4]);
    expect(banner.adm).toContain('/creative/300x250.svg');
    expect(sim.stats().nativeBids).toBe(1);
  });

  it('honours deals and private auctions on native imps too', async () => {
    const sim = await simulator({ deals: true, seat: 'alpha', priceCpm: { min: 1, max: 1 } });
    const request = {
      id: 'auction-1',
      imp: [
        {
          id: 'imp-n',
          native: { request: nativeRequest() },
          pmp: { private_auction: 1, deals: [{ id: 'native-deal', bidfloor: 2.5, wseat: ['alpha'] }] },
        },
      ],
    };
    const [bid] = bidsOf(await post(sim, request));

    expect(bid).toMatchObject({ dealid: 'native-deal', price: 2.5 });
    expect(assetIds(nativeOf(bid))).toEqual([1, 2, 3, 4]);
  });

  it('leads from a real native ad, macros substituted, to its image, landing page and trackers', async () => {
    const sim = await simulator();
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
    const image = await get(native.assets[1].img.url);

    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(pngSize(image.body)).toEqual({ w: 150, h: 125 });
    expect((await get(substitute(native.link.url))).body.toString()).toContain(
      'Simulated advertiser landing page',
    );
    for (const tracker of native.imptrackers) {
      expect((await get(substitute(tracker))).status).toBe(200);
    }
    expect((await get(substitute(native.link.clicktrackers[0]))).status).toBe(200);
    expect(sim.trackerHits).toEqual([
      { kind: 'imp', query: { auction: 'auction-1', imp: 'imp-n', crid: 'simulated-seat-native' } },
      { kind: 'imp', query: { auction: 'auction-1', imp: 'imp-n', tracker: 'verification' } },
      { kind: 'click', query: { auction: 'auction-1', imp: 'imp-n', crid: 'simulated-seat-native' } },
    ]);
  });
});

describe('DspSimulator: PNG images', () => {
  it('serves the creative as a cacheable PNG of the requested size, rendered once per size', async () => {
    const sim = await simulator();
    const first = await get(`${sim.url}/creative/300x250.png?crid=x`);
    const again = await get(`${sim.url}/creative/300x250.png`);
    const other = await get(`${sim.url}/creative/728x90.png`);

    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('image/png');
    expect(first.headers['cache-control']).toMatch(/public, max-age=\d+/);
    expect(pngSize(first.body)).toEqual({ w: 300, h: 250 });
    expect(again.body.equals(first.body)).toBe(true);
    expect(pngSize(other.body)).toEqual({ w: 728, h: 90 });
    expect(sim.stats().images).toBe(3);
  });

  it('renders concurrent requests for one size once, all answered alike', async () => {
    const sim = await simulator();
    const answers = await Promise.all([1, 2, 3, 4].map(() => get(`${sim.url}/native-image/640x480.png`)));

    expect(answers.every((a) => a.status === 200 && a.body.equals(answers[0].body))).toBe(true);
    expect(pngSize(answers[0].body)).toEqual({ w: 640, h: 480 });
  });

  it('serves a photo-like native image up to 2000 pixels a side', async () => {
    const sim = await simulator();
    const image = await get(`${sim.url}/native-image/2000x1000.png`);

    expect(image.headers['content-type']).toBe('image/png');
    expect(pngSize(image.body)).toEqual({ w: 2000, h: 1000 });
    expect(sim.stats()).toMatchObject({ images: 1, hugeImages: 0 });
  });

  it('answers a native image beyond 2000 pixels with a PNG header announcing it and 20 MiB, unrendered', async () => {
    const sim = await simulator();
    // Unrendered: the answer is the same 20 MiB at 4 and at 81 megapixels, and no image is drawn.
    const small = await get(`${sim.url}/native-image/2001x2001.png`);
    const image = await get(`${sim.url}/native-image/9000x9000.png`);

    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/png');
    expect(Number(image.headers['content-length'])).toBe(image.body.length);
    expect(image.body.length).toBeGreaterThanOrEqual(HUGE_IMAGE_BYTES);
    expect(pngSize(image.body)).toEqual({ w: 9000, h: 9000 });
    expect(image.body.subarray(-8, -4).toString('latin1')).toBe('IEND');
    expect(pngSize(small.body)).toEqual({ w: 2001, h: 2001 });
    expect(small.body.length).toBe(image.body.length);
    expect(sim.stats()).toMatchObject({ images: 0, hugeImages: 2 });
  });

  it.each(['0x10.png', '10x0.png', '123456x1.png', '300x250.jpg', '300x250', 'x.png'])(
    'answers 404 to the native image %s',
    async (name) => {
      const sim = await simulator();
      expect((await get(`${sim.url}/native-image/${name}`)).status).toBe(404);
    },
  );
});

describe('DspSimulator: native faults', () => {
  const withBanner = (request: unknown = nativeRequest()) =>
    nativeBidRequest(request, [{ id: 'imp-b', banner: { w: 300, h: 250 } }]);

  it.each<[NativeFault, (native: string, sim: DspSimulator, occurrence: number) => void]>([
    [
      'native_missing_assets',
      (adm) => {
        const native = JSON.parse(adm).native;
        expect(native.assets.filter((a: Parsed) => a.title || a.img)).toEqual([]);
        expect(assetIds(native)).toEqual([3, 4]);
      },
    ],
    [
      'native_wrong_ids',
      (adm) => {
        const ids = assetIds(JSON.parse(adm).native);
        expect(ids).toHaveLength(4);
        for (const id of ids) {
          expect(id).toBeGreaterThan(5);
        }
      },
    ],
    [
      'native_title_too_long',
      (adm) => expect(JSON.parse(adm).native.assets[0].title.text).toHaveLength(140 + TITLE_OVERRUN),
    ],
    [
      'native_huge_image',
      (adm, sim) => {
        const img = JSON.parse(adm).native.assets[1].img;
        expect(img.url.startsWith(`${sim.url}/native-image/9000x9000.png?`)).toBe(true);
        // The size announced stays the one asked: only fetching the image shows the trap.
        expect([img.w, img.h]).toEqual([150, 125]);
      },
    ],
    [
      'native_image_never_answers',
      (adm, sim) =>
        expect(JSON.parse(adm).native.assets[1].img.url.startsWith(`${sim.url}${HANG_PATH}?`)).toBe(true),
    ],
    ['native_bad_link', (adm) => expect(JSON.parse(adm).native.link.url).toBe(JAVASCRIPT_LINK)],
    [
      'native_wrong_types',
      (adm, _sim, occurrence) => {
        const native = JSON.parse(adm).native;
        if (occurrence === 0) {
          expect(Array.isArray(native.assets)).toBe(false);
          expect(native.assets['1'].title.text).toEqual(expect.any(String));
        } else {
          expect(typeof native.assets[0].title.text).toBe('number');
          expect(typeof native.assets[1].img.w).toBe('string');
          expect(typeof native.assets[2].data.value).toBe('number');
        }
      },
    ],
    [
      'native_not_json',
      (adm, _sim, occurrence) => {
        expect(() => JSON.parse(adm)).toThrow(SyntaxError);
        if (occurrence === 0) {
          expect(adm.startsWith('{"native":{')).toBe(true);
        } else {
          expect(adm.startsWith('<a href=')).toBe(true);
        }
      },
    ],
    [
      'native_price_macro_tracker',
      (adm) => {
        const [first, second] = JSON.parse(adm).native.imptrackers;
        expect(first).toContain('${AUCTION_PRICE}');
        expect(second).not.toContain('${AUCTION_PRICE}');
      },
    ],
  ])('%s corrupts the native bid, and only it', async (fault, check) => {
    const sim = await simulator({ faults: { [fault]: 1 } });
    for (const occurrence of [0, 1]) {
      const answer = await post(sim, withBanner());
      expect(answer.status).toBe(200);
      const [native, banner] = bidsOf(answer);
      expect(native.impid).toBe('imp-n');
      check(native.adm as string, sim, occurrence);
      expect(banner.adm).toContain('/creative/300x250.svg');
    }
    expect(sim.stats().faults[fault]).toBe(2);
    expect(sim.stats()).toMatchObject({ requests: 2, bids: 0, nativeBids: 0 });
  });

  it('native faults corrupt the static ad too, and keep the wrapper setting', async () => {
    const sim = await simulator({ native: 'static', nativeWrapper: false, faults: { native_huge_image: 1 } });
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0], false);

    expect(native.assets).toEqual([
      { id: 5, img: { url: expect.stringContaining('/native-image/9000x9000.png?'), w: 300, h: 250 } },
    ]);
  });

  it('native_title_too_long answers a real ad whatever the mode', async () => {
    const sim = await simulator({ native: 'static', faults: { native_title_too_long: 1 } });
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
    expect(native.assets[0].title.text.length).toBe(140 + TITLE_OVERRUN);
  });

  it('a native fault leaves a request without a native imp that can carry it answered normally', async () => {
    const sim = await simulator({ faults: { native_title_too_long: 1 } });
    const banner = await post(sim, { id: 'a1', imp: [{ id: 'imp-1', banner: { w: 300, h: 250 } }] });
    const noTitle = await post(sim, nativeBidRequest(nativeRequest(EMAIL_ASSETS.slice(1))));

    expect(bidsOf(banner)[0].adm).toContain('/creative/300x250.svg');
    expect(assetIds(nativeOf(bidsOf(noTitle)[0]))).toEqual([2, 3, 4]);
    expect(sim.stats()).toMatchObject({ bids: 2, nativeBids: 1 });
    expect(sim.stats().faults.native_title_too_long).toBe(0);
  });

  it('native_image_never_answers holds the image request until the client hangs up, and close() cuts it', async () => {
    const sim = await simulator({ faults: { native_image_never_answers: 1 } });
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
    const url = native.assets[1].img.url as string;
    const abandoned = await readFor(url, undefined, 200, 'GET');

    expect(abandoned).toEqual({ bytes: 0, aborted: true });
    const patient = readFor(url, undefined, 60_000, 'GET');
    patient.catch(() => undefined);
    await ioUntil(() => sim.stats().hangs === 2, 'the second image request');
    // Closing cuts the held request and waits for no timer: it resolves on a stopped clock.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      await sim.close();
    } finally {
      vi.useRealTimers();
    }
    await expect(patient).rejects.toThrow();
  });

  it('native_huge_image leads to a 20 MiB image', async () => {
    const sim = await simulator({ faults: { native_huge_image: 1 } });
    const native = nativeOf(bidsOf(await post(sim, nativeBidRequest()))[0]);
    const res = await get(native.assets[1].img.url);

    expect(res.body.length).toBeGreaterThanOrEqual(HUGE_IMAGE_BYTES);
    expect(sim.stats().hugeImages).toBe(1);
  });

  it('refuses an unknown native mode, at start and in configure()', async () => {
    const bogus = { native: 'video' } as unknown as DspSimulatorOptions;
    await expect(DspSimulator.start(bogus)).rejects.toThrow(RangeError);
    const sim = await simulator();
    expect(() => sim.configure(bogus)).toThrow(RangeError);
  });
});
