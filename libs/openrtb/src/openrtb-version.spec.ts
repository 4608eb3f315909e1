import { describe, expect, it } from 'vitest';
import { validateBidRequestAgainstSchema } from '@app/testing';
import type { BidRequest } from './openrtb.types';
import { toOpenRtb26 } from './openrtb-version';
import { applyPrivacy } from './privacy';
import { supplyChainOf, withSource } from './supply-chain';

/** A request as the exchange builds it: privacy signals and supply chain in 2.5's places. */
function request25(): BidRequest {
  const base: BidRequest = {
    id: 'a-1',
    imp: [{ id: '1', banner: { w: 300, h: 250 } }],
    site: { id: 'pub-1', domain: 'news.example' },
    device: { ip: '203.0.113.7' },
    user: { id: 'u-1' },
  };
  const sourced = withSource(
    base,
    'a-1',
    supplyChainOf('adx.example', { sellerId: 'pub-1', sellerType: 'PUBLISHER' }),
  );
  return applyPrivacy(
    sourced,
    {
      gdpr: 1,
      gdprConsent: 'CPGWbY_PGWbY_GYAAAENABCAAIAAAAAAAAAAACEAAAAA',
      usPrivacy: '1YNN',
      gpp: 'DBABMA~x',
      gppSid: [2],
      coppa: true,
    },
    true,
  );
}

describe('toOpenRtb26', () => {
  it("is valid against the public OpenRTB 2.5 schema in 2.5's places", () => {
    expect(validateBidRequestAgainstSchema(request25())).toEqual([]);
  });

  it("moves the promoted fields out of ext to 2.6's places, user last", () => {
    const out = toOpenRtb26(request25());
    expect(out.regs).toEqual({ coppa: 1, gdpr: 1, us_privacy: '1YNN', gpp: 'DBABMA~x', gpp_sid: [2] });
    expect(out.user).toEqual({ consent: 'CPGWbY_PGWbY_GYAAAENABCAAIAAAAAAAAAAACEAAAAA', id: 'u-1' });
    expect(out.source).toEqual({
      tid: 'a-1',
      fd: 0,
      schain: { complete: 1, ver: '1.0', nodes: [{ asi: 'adx.example', sid: 'pub-1', hp: 1 }] },
    });
    expect(Object.keys(out).at(-1)).toBe('user');
    expect(JSON.stringify(out).endsWith('"id":"u-1"}}')).toBe(true);
  });

  it('is refused by the 2.5 schema exactly where 2.6 differs', () => {
    const problems = validateBidRequestAgainstSchema(toOpenRtb26(request25()));
    // gdpr, us_privacy, gpp and gpp_sid in regs; schain in source; consent in user.
    expect(problems.sort()).toEqual([
      ...new Array<string>(4).fill('/regs must NOT have additional properties'),
      '/source must NOT have additional properties',
      '/user must NOT have additional properties',
    ]);
  });

  it('leaves a request without regs, source or consent as it is', () => {
    const plain: BidRequest = { id: 'a', imp: [{ id: '1' }], user: { id: 'u' } };
    expect(JSON.parse(JSON.stringify(toOpenRtb26(plain)))).toEqual(plain);
  });
});

describe('supplyChainOf', () => {
  it('is complete for a publisher selling directly, and for one that is both', () => {
    expect(supplyChainOf('adx.example', { sellerId: 's-9', sellerType: 'PUBLISHER' }).complete).toBe(1);
    expect(supplyChainOf('adx.example', { sellerId: 's-9', sellerType: 'BOTH' }).complete).toBe(1);
  });

  it('is incomplete for an intermediary, whose upstream nodes we do not know', () => {
    expect(supplyChainOf('adx.example', { sellerId: 's-9', sellerType: 'INTERMEDIARY' })).toEqual({
      complete: 0,
      ver: '1.0',
      nodes: [{ asi: 'adx.example', sid: 's-9', hp: 1 }],
    });
  });
});
