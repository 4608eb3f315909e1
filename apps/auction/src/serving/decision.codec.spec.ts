import { describe, expect, it } from 'vitest';
import type { AdDecision } from '../core/ad-decision';
import { NO_WINNER } from '../core/event-dimensions';
import { decodeDecision, decodeTouch, encodeCreative, encodeDecision, encodeTouch } from './decision.codec';

const AUCTION = '0f8fad5b-d9cb-469f-a165-70867728950e';

function decision(overrides: Partial<AdDecision> = {}): AdDecision {
  return {
    auctionId: AUCTION,
    userId: '4f1c2a3b-0000-4000-8000-000000000001',
    filled: true,
    imageUrl: 'https://cdn.dsp.example/600x200.png?crid=c1',
    clickUrl: `https://dsp.example/click?auction=${AUCTION}&price=2.51&imp=1`,
    impressionTrackers: ['https://dsp.example/imp?a=1', 'https://t.example/p'],
    clickTrackers: ['https://dsp.example/ct?p=2.51'],
    context: {
      publisher_id: 'pub-1',
      publisher_domain: 'morningledger.com',
      template_id: 'tpl-1',
      ad_slot_id: 'slot-1-1-1',
      size: '600x200',
      placement_id: 'drop\t7\\x',
      list_id: 'list\n1',
      segment_key: 'topic',
      segment_value: 'gardening €',
      age: '25-34',
      gender: 'female',
      email_domain: 'gmail.com',
      country: 'US',
      region: 'California',
      metro: '807',
      zip: '94043',
      device_maker: 'Apple',
      device_model: 'iPhone',
      device_type: 'Phone',
      os: 'iOS',
      browser: 'Mail',
    },
    winner: {
      advertiser_id: 'adv-1',
      advertiser_domain: 'alpha.example',
      insertion_order_id: 'io-1',
      campaign_id: 'cmp-1',
      campaign_type: 'takeover',
      demand_type: 'exchange',
      strategy_id: 'str-1',
      creative_id: 'dsp-alpha:c1',
    },
    dspId: 'dsp-alpha',
    dealId: 'deal-1',
    clearingMicros: 2_510_000,
    spendMicros: 2510,
    revenueMicros: 2008,
    ...overrides,
  };
}

const roundTrip = (d: AdDecision, seen: boolean) => {
  const creative = encodeCreative(d);
  return decodeDecision(encodeDecision(d, seen, creative?.ref ?? ''), creative?.text);
};

describe('decision codec', () => {
  it('reads back a decision not yet viewed as it was, trackers and first-view money included', () => {
    expect(roundTrip(decision(), false)).toEqual({
      seen: false,
      creativeRef: encodeCreative(decision())!.ref,
      decision: decision(),
    });
  });

  it('leaves out what only the first view needs once the ad was viewed', () => {
    expect(roundTrip(decision(), true)?.decision).toEqual(
      decision({ impressionTrackers: [], spendMicros: 0, revenueMicros: 0 }),
    );
  });

  it('keeps the billing notice until the first view, apart from the impression trackers', () => {
    const billed = decision({ billingNotice: 'https://dsp.example/bill?p=2.51&l=0' });
    expect(roundTrip(billed, false)?.decision).toEqual(billed);
    expect(
      roundTrip(decision({ impressionTrackers: [], billingNotice: 'https://b.example/' }), false)?.decision,
    ).toMatchObject({ impressionTrackers: [], billingNotice: 'https://b.example/' });
    const viewed = roundTrip(billed, true)?.decision;
    expect(viewed?.billingNotice).toBeUndefined();
    expect(viewed?.impressionTrackers).toEqual([]);
  });

  it('reads back an empty slot, and ids that are not UUIDs', () => {
    const empty = decision({
      filled: false,
      imageUrl: undefined,
      clickUrl: undefined,
      impressionTrackers: [],
      clickTrackers: [],
      winner: NO_WINNER,
      dspId: undefined,
      dealId: undefined,
      clearingMicros: 0,
      spendMicros: 0,
      revenueMicros: 0,
      userId: 'not-a-uuid~\t',
    });
    expect(encodeCreative(empty)).toBeUndefined();
    expect(roundTrip(empty, false)?.decision).toEqual(empty);
  });

  it("shares one creative entry between decisions that differ only in their auction's id and price", () => {
    const other = decision({
      auctionId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      clickUrl: 'https://dsp.example/click?auction=7c9e6679-7425-40de-944b-e07fc1f90ae7&price=3.4&imp=1',
      clickTrackers: ['https://dsp.example/ct?p=3.4'],
      clearingMicros: 3_400_000,
    });
    expect(encodeCreative(other)!.ref).toBe(encodeCreative(decision())!.ref);
    // Read back with the shared entry, each gets its own URLs.
    const shared = encodeCreative(decision())!;
    expect(decodeDecision(encodeDecision(other, true, shared.ref), shared.text)?.decision.clickUrl).toBe(
      other.clickUrl,
    );
    expect(encodeCreative(decision({ imageUrl: 'https://cdn.dsp.example/other.png' }))!.ref).not.toBe(
      shared.ref,
    );
  });

  it('keeps a viewed decision apart from its creative, in under 256 bytes with every dimension set', () => {
    const record = encodeDecision(decision(), true, encodeCreative(decision())!.ref);
    expect(record).not.toMatch(/https?:/);
    expect(Buffer.byteLength(record)).toBeLessThan(256);
  });

  it('refuses a record whose creative entry is gone, or of another format', () => {
    const d = decision();
    const record = encodeDecision(d, true, encodeCreative(d)!.ref);
    expect(decodeDecision(record, undefined)).toBeUndefined();
    expect(decodeDecision(`1x${record.slice(2)}`, encodeCreative(d)!.text)).toBeUndefined();
  });

  it('encodes a touch as the decision it points to and when', () => {
    expect(decodeTouch(encodeTouch('AbCdEfGhIjKlMnOp', 1_795_000_000_123))).toEqual({
      decisionRef: 'AbCdEfGhIjKlMnOp',
      at: 1_795_000_000_123,
    });
  });
});
