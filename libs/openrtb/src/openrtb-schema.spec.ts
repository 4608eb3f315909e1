import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateBidRequestAgainstSchema, validateBidResponseAgainstSchema } from '@app/testing';
import { BidRejectionReason, NoBidReason, validateBidResponse } from './bid-response.validator';
import type { BidRequest } from './openrtb.types';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/openrtb');
const read = (file: string): unknown => JSON.parse(readFileSync(path.join(FIXTURES, file), 'utf8'));
const jsonIn = (dir: string): string[] =>
  readdirSync(path.join(FIXTURES, dir))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `${dir}/${f}`);

describe('the OpenRTB 2.5 bid request schema', () => {
  it.each(jsonIn('spec-2.5/bid-request'))('accepts the spec example %s', (file) => {
    expect(validateBidRequestAgainstSchema(read(file))).toEqual([]);
  });

  it.each(['bsm/breq.banner.json', 'bsm/breq.native.json'])('accepts %s', (file) => {
    expect(validateBidRequestAgainstSchema(read(file))).toEqual([]);
  });

  it.each(jsonIn('cases/requests'))('accepts the request of our cases %s', (file) => {
    expect(validateBidRequestAgainstSchema(read(file))).toEqual([]);
  });

  it('refuses the pre-2.5 fields of bsm/breq.exp.json', () => {
    expect(validateBidRequestAgainstSchema(read('bsm/breq.exp.json'))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^\/site must NOT have additional properties/)]),
    );
  });

  it.each<[string, (request: Record<string, unknown>) => void, RegExp]>([
    ['no imp', (r) => delete r.imp, /must have required property 'imp'/],
    ['a numeric id', (r) => (r.id = 80), /^\/id must be string/],
    ['an alpha-2 country', (r) => (r.device = { geo: { country: 'US' } }), /^\/device\/geo\/country/],
    ['a malformed ip', (r) => (r.device = { ip: '300.1.1.1' }), /^\/device\/ip/],
    ['auction type 3', (r) => (r.at = 3), /^\/at must be equal to one of the allowed values/],
    [
      'an unknown field',
      (r) => (r.imp = [{ id: '1', floor: 1 }]),
      /^\/imp\/0 must NOT have additional properties/,
    ],
    [
      'a native object instead of a string',
      (r) => (r.imp = [{ id: '1', native: { request: {} } }]),
      /native\/request/,
    ],
  ])('refuses a request with %s', (_name, breakIt, error) => {
    const request = read('spec-2.5/bid-request/simple-banner.json') as Record<string, unknown>;
    breakIt(request);
    expect(validateBidRequestAgainstSchema(request)).toEqual(
      expect.arrayContaining([expect.stringMatching(error)]),
    );
  });
});

describe('the OpenRTB 2.5 bid response schema, and the gaps the validator closes', () => {
  const request = read('cases/requests/banner.json') as BidRequest;
  const bid = {
    id: 'b1',
    impid: '1',
    price: 1,
    adm: '<a href="https://x.example/"><img src="https://x.example/i.png"></a>',
    adomain: ['acme.com'],
  };
  const answer = (override: Record<string, unknown>, bidOverride: Record<string, unknown> = {}) => ({
    id: 'auction-1',
    seatbid: [{ seat: 'seat-a', bid: [{ ...bid, ...bidOverride }] }],
    ...override,
  });

  it('accepts a valid answer, as the validator does', () => {
    expect(validateBidResponseAgainstSchema(answer({}))).toEqual([]);
    expect(
      validateBidResponse({ status: 200, body: JSON.stringify(answer({})), request }).accepted,
    ).toHaveLength(1);
  });

  it.each(jsonIn('spec-2.5/bid-response').filter((f) => !f.includes('direct-deal')))('accepts %s', (file) => {
    expect(validateBidResponseAgainstSchema(read(file))).toEqual([]);
  });

  it('refuses the nurl typo of the spec direct-deal example and a nurl still holding macros', () => {
    expect(
      validateBidResponseAgainstSchema(
        read('spec-2.5/bid-response/direct-deal-ad-served-on-win-notice.json'),
      ),
    ).not.toEqual([]);
    expect(validateBidResponseAgainstSchema(read('bsm/bres.multi.json'))).toEqual(
      expect.arrayContaining([expect.stringMatching(/nurl must match format "uri"/)]),
    );
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>, NoBidReason | BidRejectionReason]>([
    ['adomain as a string', {}, { adomain: 'acme.com' }, BidRejectionReason.InvalidField],
    ['price 0', {}, { price: 0 }, BidRejectionReason.InvalidPrice],
    ['seatbid as an object', { seatbid: { bid: [bid] } }, {}, NoBidReason.MalformedResponse],
    ['nbr as a number', { nbr: 99 }, {}, NoBidReason.DeclaredNoBid],
    ['an unknown impid', {}, { impid: '7' }, BidRejectionReason.UnknownImpression],
    ['a blocked advertiser', {}, { adomain: ['blocked.com'] }, BidRejectionReason.BlockedAdvertiser],
  ])('lets %s pass, which the validator refuses', (_name, override, bidOverride, reason) => {
    const body = answer(override, bidOverride);
    expect(validateBidResponseAgainstSchema(body)).toEqual([]);
    const result = validateBidResponse({ status: 200, body: JSON.stringify(body), request });
    expect(result.noBid ?? result.rejected[0]?.reason).toBe(reason);
  });
});
