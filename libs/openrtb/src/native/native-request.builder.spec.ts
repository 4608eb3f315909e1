import { describe, expect, it } from 'vitest';
import { validateBidRequestAgainstSchema } from '@app/testing';
import type { BidRequest } from '../openrtb.types';
import { resolveFixture } from './native-fixtures.spec-helper';
import {
  NATIVE_ASSET_IDS,
  NATIVE_IMAGE_MIMES,
  NATIVE_TITLE_LEN,
  buildNativeRequest,
  nativeImpPayload,
} from './native-request.builder';
import { validateNativeRequest } from './native-request.validator';
import { NativeRejection, validateNativeMarkup } from './native-response.validator';
import { NativeDataType, NativeImageType, type NativeRequest } from './native.types';

const MACROS = { auctionId: 'auction-1', impId: '1', priceMicros: 1_000_000 };

describe('buildNativeRequest', () => {
  const request = buildNativeRequest({ w: 600, h: 200 });

  it('asks for the email native of spec 2.9: version 1.1, content context, in-feed placement', () => {
    expect(request).toMatchObject({ ver: '1.1', context: 1, plcmttype: 1 });
  });

  it('numbers its five assets 1 to 5: title, main image, description, sponsor, static ad', () => {
    expect(request.assets.map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    expect(request.assets).toEqual([
      { id: NATIVE_ASSET_IDS.title, required: 0, title: { len: 140 } },
      {
        id: NATIVE_ASSET_IDS.mainImage,
        required: 0,
        img: {
          type: NativeImageType.Main,
          wmin: 300,
          hmin: 100,
          mimes: ['image/png', 'image/jpeg', 'image/gif'],
        },
      },
      { id: NATIVE_ASSET_IDS.description, required: 0, data: { type: NativeDataType.Description, len: 200 } },
      { id: NATIVE_ASSET_IDS.sponsored, required: 0, data: { type: NativeDataType.Sponsored, len: 25 } },
      {
        id: NATIVE_ASSET_IDS.staticAd,
        required: 0,
        img: { type: 505, w: 600, h: 200, mimes: [...NATIVE_IMAGE_MIMES] },
      },
    ]);
    expect(NATIVE_TITLE_LEN).toBe(140);
  });

  it('requires no asset: a static answer and a real one must both be possible', () => {
    expect(request.assets.filter((a) => a.required === 1)).toEqual([]);
    const answer = (assets: unknown[]) =>
      validateNativeMarkup({ assets, link: { url: 'https://dsp.example/c' } }, request, MACROS);
    expect(answer([{ id: 5, img: { url: 'https://cdn.example/s.png' } }])).toMatchObject({
      ok: true,
      ad: { kind: 'static' },
    });
    expect(
      answer([
        { id: 1, title: { text: 'Title' } },
        { id: 2, img: { url: 'https://cdn.example/m.png' } },
      ]),
    ).toMatchObject({ ok: true, ad: { kind: 'flattened' } });
    expect(answer([{ id: 1, title: { text: 'Title' } }])).toMatchObject({
      reason: NativeRejection.IncompleteNative,
    });
  });

  it('sizes the static image to the slot and the main image to at least half of it', () => {
    const odd = buildNativeRequest({ w: 301, h: 1 });
    expect(odd.assets[1].img).toMatchObject({ wmin: 150, hmin: 1 });
    expect(odd.assets[4].img).toMatchObject({ w: 301, h: 1 });
  });

  it('passes its own request validation, and Prebid Server’s checks', () => {
    expect(validateNativeRequest(request)).toEqual([]);
    expect(validateNativeRequest(JSON.stringify(request))).toEqual([]);
  });

  it.each([
    [0, 200],
    [600, -1],
    [600.5, 200],
    [Number.NaN, 200],
    [Number.POSITIVE_INFINITY, 200],
  ])('refuses a slot of %s x %s', (w, h) => {
    expect(() => buildNativeRequest({ w, h })).toThrow(RangeError);
  });
});

describe('nativeImpPayload', () => {
  const request = buildNativeRequest({ w: 600, h: 200 });

  it('puts the request in as JSON text (OpenRTB 2.5) or as the object itself (the spec)', () => {
    const asString = nativeImpPayload(request, 'string');
    expect(asString).toEqual({ request: JSON.stringify(request), ver: '1.1' });
    expect(JSON.parse(asString.request)).toEqual(request);
    expect(nativeImpPayload(request, 'object')).toEqual({ request, ver: '1.1' });
  });

  /** The request of our bid-response cases, its banner impression made native. */
  const bidRequest = (native: unknown): BidRequest => {
    const base = JSON.parse(resolveFixture({ file: 'cases/requests/banner.json' }) as string) as BidRequest;
    const imp: Record<string, unknown> = { ...base.imp[0], native };
    delete imp.banner;
    return { ...base, imp: [imp as unknown as BidRequest['imp'][0]] };
  };

  it('in its string form, passes the public OpenRTB 2.5 request schema inside a full bid request', () => {
    expect(validateBidRequestAgainstSchema(bidRequest(nativeImpPayload(request, 'string')))).toEqual([]);
  });

  it('in its object form, fails that schema: the open question of the spec against OpenRTB 2.5', () => {
    expect(validateBidRequestAgainstSchema(bidRequest(nativeImpPayload(request, 'object')))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/imp\/0\/native\/request must be string/)]),
    );
  });

  it('round-trips: a DSP reading either form gets the same request', () => {
    const fromString = JSON.parse(nativeImpPayload(request, 'string').request) as NativeRequest;
    expect(fromString).toEqual(nativeImpPayload(request, 'object').request);
  });
});
