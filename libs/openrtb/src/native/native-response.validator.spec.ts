import { describe, expect, it } from 'vitest';
import type { MacroValues } from '../macro.substitution';
import { type FixtureRef, readCases, resolveFixture } from './native-fixtures.spec-helper';
import { NATIVE_ASSET_IDS, buildNativeRequest } from './native-request.builder';
import {
  MAX_NATIVE_IMP_TRACKERS,
  MAX_NATIVE_MARKUP_BYTES,
  NativeRejection,
  validateNativeMarkup,
  type NativeValidation,
} from './native-response.validator';
import type { NativeRequest } from './native.types';

/**
 * One case of `test/fixtures/openrtb/cases/native-responses`. The request is built for `slot`
 * (600x200 when nothing is given), written inline, or read from a fixture (a JSON string, as
 * `imp.native.request` holds it, is parsed). The adm is `adm` as it is (a string of JSON, or an
 * object for the tolerated form), or `admRef`: a fixture's text, or the value at a pointer.
 */
interface NativeResponseCase {
  description: string;
  slot?: { w: number; h: number };
  request?: NativeRequest;
  requestRef?: FixtureRef;
  macros?: MacroValues;
  adm?: unknown;
  admRef?: FixtureRef;
  expect: { ok: true; ad: Record<string, unknown> } | { ok: false; reason: string; detail?: string };
}

const MACROS: MacroValues = { auctionId: 'auction-1', impId: '1', adId: 'ad-1', priceMicros: 1_250_000 };

function requestOf(c: NativeResponseCase): NativeRequest {
  if (c.request) {
    return c.request;
  }
  if (c.requestRef) {
    const value = resolveFixture(c.requestRef);
    return (typeof value === 'string' ? JSON.parse(value) : value) as NativeRequest;
  }
  return buildNativeRequest(c.slot ?? { w: 600, h: 200 });
}

const cases = readCases<NativeResponseCase>('native-responses');

describe('validateNativeMarkup, table of cases', () => {
  it('has a case for every rejection reason but too_large (below: its adm is over 64 KiB)', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    const reasons = new Set(cases.map(({ c }) => (c.expect.ok ? undefined : c.expect.reason)));
    expect(
      Object.values(NativeRejection).filter((r) => r !== NativeRejection.TooLarge && !reasons.has(r)),
    ).toEqual([]);
    expect([...reasons].filter((r) => r && !Object.values<string>(NativeRejection).includes(r))).toEqual([]);
  });

  it.each(cases)('$file', ({ c }) => {
    const adm = c.admRef ? resolveFixture(c.admRef) : c.adm;
    const result = validateNativeMarkup(adm, requestOf(c), c.macros ?? MACROS);
    if (c.expect.ok) {
      expect(result, c.description).toEqual({ ok: true, ad: c.expect.ad });
    } else {
      expect(result, c.description).toMatchObject({ ok: false, reason: c.expect.reason });
      const { detail } = result as Extract<NativeValidation, { ok: false }>;
      expect(detail).toEqual(expect.any(String));
      if (c.expect.detail) {
        expect(detail).toContain(c.expect.detail);
      }
    }
  });
});

const request = buildNativeRequest({ w: 600, h: 200 });
const link = { url: 'https://dsp.example/click' };
const staticAd = {
  assets: [{ id: NATIVE_ASSET_IDS.staticAd, img: { url: 'https://cdn.dsp.example/ad.png', w: 600, h: 200 } }],
  link,
};
const validate = (adm: unknown): NativeValidation => validateNativeMarkup(adm, request, MACROS);

describe('validateNativeMarkup', () => {
  it('reads the same response as a string, an object, and either wrapped in "native"', () => {
    const expected = validate(JSON.stringify(staticAd));
    expect(expected.ok).toBe(true);
    expect(validate(staticAd)).toEqual(expected);
    expect(validate({ native: staticAd })).toEqual(expected);
    expect(validate(JSON.stringify({ native: staticAd }))).toEqual(expected);
  });

  it('refuses markup above MAX_NATIVE_MARKUP_BYTES, counted in UTF-8 bytes, as a string or an object', () => {
    const padded = (pad: string) => ({ ...staticAd, ext: { pad } });
    const size = JSON.stringify(padded('')).length;
    expect(validate(JSON.stringify(padded('x'.repeat(MAX_NATIVE_MARKUP_BYTES - size)))).ok).toBe(true);
    const multibyte = JSON.stringify(padded('é'.repeat(MAX_NATIVE_MARKUP_BYTES / 2)));
    expect(multibyte.length).toBeLessThan(MAX_NATIVE_MARKUP_BYTES);
    expect(validate(multibyte)).toMatchObject({ ok: false, reason: NativeRejection.TooLarge });
    expect(validate(padded('x'.repeat(MAX_NATIVE_MARKUP_BYTES)))).toMatchObject({
      ok: false,
      reason: NativeRejection.TooLarge,
    });
  });

  it('refuses, without throwing, adm nested too deep, a cycle, a BigInt, a function', () => {
    const cyclic: Record<string, unknown> = { ...staticAd };
    cyclic.self = cyclic;
    let deep: unknown = staticAd;
    for (let i = 0; i < 100_000; i += 1) {
      deep = { native: deep };
    }
    const deepText = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
    for (const adm of [cyclic, deep, deepText, { ...staticAd, n: 1n }, () => staticAd, Symbol('adm')]) {
      let result: NativeValidation | undefined;
      expect(() => (result = validate(adm))).not.toThrow();
      expect(result!.ok).toBe(false);
    }
  });

  it('does not let __proto__ keys pollute Object.prototype', () => {
    validate('{"__proto__":{"polluted":1},"assets":[{"id":5,"__proto__":{"polluted":1},"img":{"url":"x"}}]}');
    validate({ constructor: { prototype: { polluted: 1 } }, ...staticAd });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts exactly MAX_NATIVE_IMP_TRACKERS impression trackers', () => {
    const trackers = (n: number) => Array.from({ length: n }, (_, i) => `https://t${i}.example/imp`);
    expect(validate({ ...staticAd, imptrackers: trackers(MAX_NATIVE_IMP_TRACKERS) }).ok).toBe(true);
    expect(validate({ ...staticAd, imptrackers: trackers(MAX_NATIVE_IMP_TRACKERS + 1) })).toMatchObject({
      reason: NativeRejection.TooManyTrackers,
    });
  });

  it('encodes macro values, so an id cannot change the URL it goes into', () => {
    const result = validateNativeMarkup(
      { ...staticAd, link: { url: 'https://dsp.example/c?ad=${AUCTION_AD_ID}' } },
      request,
      { ...MACROS, adId: '"><script>&x=1#' },
    );
    expect(result).toMatchObject({
      ok: true,
      ad: { link: { url: 'https://dsp.example/c?ad=%22%3E%3Cscript%3E%26x%3D1%23' } },
    });
  });

  it('accepts the appnexus adm against its own request once its tracker holds no price macro', () => {
    const ref = 'prebid-server/appnexus-native-1.1.json';
    const adm = resolveFixture({ file: ref, pointer: '/httpcalls/0/mockResponse/body/seatbid/0/bid/0/adm' });
    const own = resolveFixture({ file: ref, pointer: '/mockBidRequest/imp/0/native/request' });
    const withoutPrice = (adm as string).replace('&pp=${AUCTION_PRICE}"]', '"]');
    expect(withoutPrice).not.toBe(adm);
    const result = validateNativeMarkup(withoutPrice, JSON.parse(own as string) as NativeRequest, MACROS);
    expect(result).toMatchObject({
      ok: true,
      ad: {
        kind: 'flattened',
        title: 'This is an example Prebid Native creative',
        // Its request makes asset 3 the sponsor (data type 1) and asset 4 the description (type 2).
        sponsored: 'Prebid.org',
        description: 'This is a Prebid Native Creative. There are many like it, but this one is mine.',
        image: { w: 3000, h: 2250 },
        imptrackers: [expect.stringMatching(/^http:\/\/nym1-ib\.adnxs\.com\/openrtb_win\?/)],
      },
    });
    // The link's own ${AUCTION_PRICE} (pp=...) is allowed, and substituted.
    expect(result.ok && result.ad.link.url).toContain('/pp=1.25/');
  });

  it('validates against any request: ids and sizes come from it, not from the email request', () => {
    const other = buildNativeRequest({ w: 300, h: 250 });
    const adm = { assets: [{ id: 5, img: { url: 'https://cdn.dsp.example/ad.png', w: 600, h: 500 } }], link };
    expect(validateNativeMarkup(adm, other, MACROS).ok).toBe(true);
    expect(validate(adm)).toMatchObject({ ok: false, reason: NativeRejection.ImageSizeMismatch });
  });

  it('never throws, and gives a known reason, whatever the response holds', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    // A copy each time: a hostile object shared between assets could be made to hold itself.
    const pick = <T>(values: readonly T[]): T =>
      structuredClone(values[Math.floor(random() * values.length)]);
    const hostile: unknown[] = [
      null,
      true,
      0,
      -1,
      1.5,
      1e308,
      '',
      ' ',
      'javascript:alert(1)',
      'https://x.example/${AUCTION_PRICE}',
      '\uD800',
      '__proto__',
      [],
      [null],
      [[]],
      {},
      { url: 1 },
      { text: {} },
      { __proto__: null },
      Array.from({ length: 7 }, () => 'https://t.example/'),
    ];
    const good = () => ({
      assets: [
        { id: 1, title: { text: 'Title' } },
        { id: 2, img: { url: 'https://cdn.example/i.png', w: 600, h: 300 } },
        { id: 3, data: { value: 'Description' } },
        { id: 4, data: { value: 'Sponsor' } },
        { id: 5, img: { url: 'https://cdn.example/s.png', w: 600, h: 200 } },
      ] as Record<string, unknown>[],
      link: { url: 'https://dsp.example/c', clicktrackers: ['https://dsp.example/ct'] } as Record<
        string,
        unknown
      >,
      imptrackers: ['https://dsp.example/i'] as unknown,
    });
    const reasons = new Set<string>(Object.values(NativeRejection));
    for (let run = 0; run < 3_000; run += 1) {
      const adm = good();
      for (let k = 0; k < 3; k += 1) {
        const where = Math.floor(random() * 4);
        if (where === 0) {
          adm.imptrackers = pick(hostile);
        } else if (where === 1) {
          adm.link[pick(['url', 'clicktrackers'])] = pick(hostile);
        } else {
          const asset = pick(adm.assets);
          const key = pick(['id', 'title', 'img', 'data', 'video', 'required']);
          const inner = asset.title ?? asset.img ?? asset.data;
          if (where === 2 || typeof inner !== 'object' || inner === null) {
            asset[key] = pick(hostile);
          } else {
            (inner as Record<string, unknown>)[pick(['text', 'url', 'value', 'w', 'h', 'type'])] =
              pick(hostile);
          }
        }
      }
      if (random() < 0.2) {
        adm.assets.reverse();
      }
      const input = random() < 0.5 ? JSON.stringify(adm) : adm;
      let result: NativeValidation | undefined;
      expect(() => (result = validate(input))).not.toThrow();
      if (!result!.ok) {
        expect(reasons.has(result!.reason)).toBe(true);
      } else {
        for (const url of [
          result!.ad.link.url,
          ...result!.ad.link.clicktrackers,
          ...result!.ad.imptrackers,
        ]) {
          expect(url).toMatch(/^https?:\/\//);
        }
      }
    }
  });
});
