import { describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { parseAdEvent, type AdEvent, type BidStatus } from '@app/events';
import type { AdContext } from './ad-context';
import { decisionDimensions, type AdDecision } from './ad-decision';
import { baseEvent, decisionEvent, DecisionEvents } from './auction-events';
import { decideAuction, settleAuction, type SettledAuction } from './auction';
import type { BidRecord, Candidate } from './candidate';
import { viewerDimensions, winnerDimensions, type WinnerDimensions } from './event-dimensions';

const catalog = loadCatalog();
const { slot, template, publisher } = catalog.slotLineage('slot-1-1-2');

const ctx: AdContext = {
  auctionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  now: new Date('2026-11-20T09:00:00.123Z'),
  slot: slot!,
  template: template!,
  publisher: publisher!,
  tag: {
    placementId: 'drop-"7"',
    listId: 'list\\1',
    recipient: 'r',
    emailDomain: 'gmail.com',
    keyValues: [['topic', 'gardening €']],
    age: '25-34',
    gender: 'female',
    consent: true,
    privacy: {},
  },
  viewer: {
    ip: '8.8.8.8',
    userAgent: 'ua',
    language: 'en',
    secure: true,
    userId: '4f1c2a3b-0000-4000-8000-000000000001',
    userKey: 'r:4f1c2a3b-0000-4000-8000-000000000001',
    geo: { country: 'US', region: 'California', metro: '807', zip: '94043' },
    device: {
      device_maker: 'Apple',
      device_model: 'iPhone',
      device_type: 'Phone',
      os: 'iOS',
      browser: 'Mail',
    },
  },
  privacy: {},
};

const rtb = (id: string, priceMicros: number, dealId?: string): Candidate => ({
  demandType: 'exchange',
  priceMicros,
  strategyId: 'str-1-2-1-1',
  creativeId: `dsp-${id}:cr`,
  advertiserDomain: `${id}.example`,
  rtb: {
    dspId: `dsp-${id}`,
    seat: 's',
    bidId: id,
    macroBidId: id,
    impId: '1',
    adId: '',
    dealId,
    floorMicros: 750_000,
    adm: '',
    crid: 'cr',
  },
});

function settled(filled: boolean): SettledAuction {
  const alpha = rtb('alpha', 3_000_000, 'deal-1');
  const beta = rtb('beta', 2_000_000);
  const records: BidRecord[] = [
    {
      dspId: 'dsp-alpha',
      status: 'lost',
      priceMicros: 3_000_000,
      dealId: 'deal-1',
      candidate: alpha,
      elapsedMs: 12,
    },
    { dspId: 'dsp-beta', status: 'lost', priceMicros: 2_000_000, candidate: beta, elapsedMs: 20 },
    { dspId: 'dsp-gamma', status: 'rejected', reason: 'below_floor', priceMicros: 100_000, elapsedMs: 9 },
    { dspId: 'dsp-delta', status: 'timeout', reason: 'timeout', elapsedMs: 150 },
  ];
  const outcome = decideAuction(filled ? [alpha, beta] : [], [], 2, (p) => p[0]);
  return settleAuction({
    ctx,
    outcome,
    creative: filled
      ? {
          imageUrl: 'https://a.example/i.png',
          clickUrl: 'https://a.example/',
          impressionTrackers: [],
          clickTrackers: [],
        }
      : undefined,
    records,
    refused: new Map(),
    winnerDimensions: (c) => winnerDimensions(catalog, c),
    dspWaitMs: 20,
  });
}

/** A bid event built as an object, field by field: the reference the encoded ones are held to. */
function bidEvent(
  at: Date,
  decision: AdDecision,
  bid: {
    dspId: string;
    status: BidStatus;
    reason?: string;
    priceMicros?: number;
    dealId?: string;
    winner: WinnerDimensions;
    lossCode?: number;
  },
): AdEvent {
  return {
    ...baseEvent('bid', at, { ...decision.context, ...bid.winner }),
    auction_id: decision.auctionId,
    user_id: decision.userId,
    dsp_id: bid.dspId,
    bid_status: bid.status,
    reason: bid.reason,
    price_micros: bid.priceMicros,
    deal_id: bid.dealId,
    loss_code: bid.lossCode,
  };
}

/** An event without its random id, for comparison. */
const comparable = ({ event_id: _id, ...rest }: AdEvent) => JSON.parse(JSON.stringify(rest));

function parsed(value: string): AdEvent {
  const result = parseAdEvent(value);
  if (!result.ok) {
    throw new Error(result.reason);
  }
  return result.event;
}

describe('DecisionEvents', () => {
  it.each([true, false])(
    "encodes an auction's events as the event objects would serialise (filled: %s)",
    (filled) => {
      const auction = settled(filled);
      const { decision } = auction;
      const events = new DecisionEvents(decision).auction(auction).map((e) => {
        expect(e.key).toBe('slot-1-1-2');
        return parsed(e.value);
      });
      const expected: AdEvent[] = [
        {
          ...decisionEvent('auction', ctx.now, decision),
          dsp_id: undefined,
          deal_id: undefined,
          price_micros: undefined,
          reason: filled ? undefined : 'no_demand',
        },
        ...auction.bids.map((bid) => bidEvent(ctx.now, decision, bid)),
        ...(filled ? [decisionEvent('win', ctx.now, decision)] : []),
      ];
      expect(events.map(comparable)).toEqual(expected.map(comparable));
      expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
      if (filled) {
        expect(events[0]).toMatchObject({
          advertiser_id: 'adv-1',
          demand_type: 'exchange',
          segment_value: 'gardening €',
        });
        expect(events.at(-1)).toMatchObject({
          type: 'win',
          dsp_id: 'dsp-alpha',
          deal_id: 'deal-1',
          price_micros: 2_010_000,
        });
        expect(events[1]).toMatchObject({ bid_status: 'won', advertiser_domain: 'alpha.example' });
      }
      expect(events[3]).toMatchObject({ bid_status: 'rejected', reason: 'below_floor', advertiser_id: '' });
    },
  );

  it('encodes a view with money on the first one only, and the viewer of the request that shows it', () => {
    const { decision } = settled(true);
    const events = new DecisionEvents(decision);
    const at = new Date('2026-11-21T10:00:00Z');
    const other = viewerDimensions({ ...ctx.viewer, geo: { country: 'FR', region: '', metro: '', zip: '' } });
    const first = parsed(events.impression(at, undefined, true).value);
    const reopen = parsed(events.impression(at, other, false).value);
    expect(comparable(first)).toEqual(
      comparable({
        ...decisionEvent('impression', at, decision),
        reopen: false,
        spend_micros: decision.spendMicros,
        revenue_micros: decision.revenueMicros,
      }),
    );
    expect(comparable(reopen)).toEqual(
      comparable({
        ...decisionEvent('impression', at, decision, { ...decisionDimensions(decision), ...other }),
        reopen: true,
      }),
    );
    expect(first.spend_micros).toBeGreaterThan(0);
    expect(reopen).toMatchObject({ country: 'FR', spend_micros: 0, revenue_micros: 0 });
    expect(comparable(parsed(events.click(at, other).value))).toEqual(
      comparable(decisionEvent('click', at, decision, { ...decisionDimensions(decision), ...other })),
    );
  });
});
