import { describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { IMAGE_FETCH_FAILURES, NATIVE_RENDER_FAILURES } from '@app/native-render';
import { BidLossReason, BidRejectionReason, LOSS_CODE_BY_REASON, LossCode } from '@app/openrtb';
import type { AdContext } from './ad-context';
import { testAdContext } from './ad-context.testing';
import {
  clearingPrice,
  decideAuction,
  MAX_LOSS_NOTICES_PER_DSP,
  NoFillReason,
  settleAuction,
} from './auction';
import type { BidRecord, Candidate } from './candidate';
import { NO_WINNER } from './event-dimensions';

const direct = (priceMicros: number, id = 'd'): Candidate => ({
  demandType: 'direct',
  priceMicros,
  strategyId: `str-${id}`,
  creativeId: `cr-${id}`,
  advertiserDomain: 'direct.example',
  imageUrl: 'https://img.example/d.png',
  clickUrl: 'https://direct.example/',
});

const rtb = (priceMicros: number, id = 'r', floorMicros = 500_000): Candidate => ({
  demandType: 'exchange',
  priceMicros,
  strategyId: `str-${id}`,
  creativeId: `dsp:${id}`,
  advertiserDomain: 'rtb.example',
  rtb: {
    dspId: `dsp-${id}`,
    seat: 's',
    bidId: id,
    macroBidId: id,
    impId: '1',
    adId: '',
    floorMicros,
    adm: '<a></a>',
    crid: id,
  },
});

const fill = (demandType: 'house' | 'fallback_ads', id: string): Candidate => ({
  ...direct(0, id),
  demandType,
});

const first = (pool: readonly Candidate[]) => pool[0];

describe('decideAuction', () => {
  it('gives the slot to the highest price across direct and RTB demand', () => {
    const outcome = decideAuction(
      [direct(1_600_000), rtb(2_500_000, 'a'), rtb(2_000_000, 'b')],
      [],
      2,
      first,
    );
    expect(outcome.filled && outcome.winner.creativeId).toBe('dsp:a');
    expect(outcome.filled && outcome.losers.map((c) => c.creativeId)).toEqual(['dsp:b', 'cr-d']);
  });

  it('keeps the slot for direct demand on a tie', () => {
    const outcome = decideAuction([rtb(2_000_000), direct(2_000_000)], [], 2, first);
    expect(outcome.filled && outcome.winner.demandType).toBe('direct');
  });

  it('fills with a house ad when no one bids, then with a fallback ad', () => {
    const house = decideAuction([], [fill('fallback_ads', 'f'), fill('house', 'h')], 2, first);
    expect(house).toMatchObject({ filled: true, clearingMicros: 0 });
    expect(house.filled && house.winner.demandType).toBe('house');
    const fallback = decideAuction([], [fill('fallback_ads', 'f')], 2, first);
    expect(fallback.filled && fallback.winner.demandType).toBe('fallback_ads');
  });

  it('leaves the slot empty with a reason when there is no demand at all', () => {
    expect(decideAuction([], [], 2, first)).toEqual({ filled: false, reason: NoFillReason.NoDemand });
  });
});

describe('clearingPrice', () => {
  it.each([
    ['first price pays the bid', rtb(3_000_000), [rtb(2_000_000)], 1, 3_000_000],
    ['second price pays the second bid plus a cent', rtb(3_000_000), [rtb(2_000_000)], 2, 2_010_000],
    ['a direct loser sets the second price', rtb(3_000_000), [direct(2_200_000)], 2, 2_210_000],
    ['alone, the floor plus a cent', rtb(3_000_000, 'a', 750_000), [], 2, 760_000],
    ['the floor when above the second price', rtb(3_000_000, 'a', 2_500_000), [rtb(1_000_000)], 2, 2_510_000],
    ['never more than the bid', rtb(2_005_000), [rtb(2_000_000)], 2, 2_005_000],
    ['a direct winner pays its CPM', direct(1_600_000), [rtb(1_000_000)], 2, 1_600_000],
  ] as const)('%s', (_name, winner, losers, at, expected) => {
    expect(clearingPrice(winner, losers, at)).toBe(expected);
  });
});

describe('settleAuction: loss reasons, codes and notices', () => {
  const ctx: AdContext = { ...testAdContext(loadCatalog(), 'slot-1-1-2'), auctionId: 'a-1' };
  const LURL =
    'https://dsp.example/loss?a=${AUCTION_ID}&b=${AUCTION_BID_ID}&s=${AUCTION_SEAT_ID}&l=${AUCTION_LOSS}&p=${AUCTION_PRICE}&m=${AUCTION_MBR}';
  const lost = (candidate: Candidate, withNotice = true): BidRecord => ({
    dspId: candidate.rtb!.dspId,
    status: 'lost',
    priceMicros: candidate.priceMicros,
    dealId: candidate.rtb!.dealId,
    candidate,
    elapsedMs: 1,
    ...(withNotice
      ? {
          lurl: LURL,
          macroIds: { auctionId: 'a-1', bidId: candidate.rtb!.macroBidId, impId: '1', seatId: 's', adId: '' },
        }
      : {}),
  });
  const settle = (paid: Candidate[], records: BidRecord[], refused = new Map<Candidate, string>()) =>
    settleAuction({
      ctx,
      outcome: decideAuction(paid, [], 2, first),
      creative: {
        imageUrl: 'https://i.example/',
        clickUrl: 'https://c.example/',
        impressionTrackers: [],
        clickTrackers: [],
      },
      records,
      refused,
      winnerDimensions: () => NO_WINNER,
      billingNotice: 'https://dsp.example/bill',
      dspWaitMs: 0,
    });

  it('names why each bid lost, codes it, and sends the losers that ask their notice without the price', () => {
    const winner = rtb(3_000_000, 'w');
    const loser = rtb(2_000_000, 'l');
    const quiet = rtb(1_000_000, 'q');
    const out = settle([winner, loser, quiet], [lost(winner), lost(loser), lost(quiet, false)]);
    expect(out.bids.map((b) => [b.status, b.reason, b.lossCode])).toEqual([
      ['won', undefined, LossCode.BidWon],
      ['lost', BidLossReason.LostToHigherBid, LossCode.LostToHigherBid],
      ['lost', BidLossReason.LostToHigherBid, LossCode.LostToHigherBid],
    ]);
    // The winner gets no loss notice, the loser without a lurl none either.
    expect(out.lossNotices).toEqual(['https://dsp.example/loss?a=a-1&b=l&s=s&l=102&p=&m=']);
    expect(out.billingNotice).toBe('https://dsp.example/bill');
    expect(out.decision.billingNotice).toBe('https://dsp.example/bill');
  });

  it("tells a loss to a deal, and to the publisher's direct campaign", () => {
    const deal = { ...rtb(1_000_000, 'deal'), rtb: { ...rtb(1_000_000, 'deal').rtb!, dealId: 'd-1' } };
    const open = rtb(900_000, 'open');
    expect(settle([deal, open], [lost(deal), lost(open)]).bids[1]).toMatchObject({
      reason: BidLossReason.LostToDeal,
      lossCode: LossCode.LostToPmpDeal,
    });
    const bid = rtb(2_000_000, 'b');
    const out = settle([direct(2_000_000), bid], [lost(bid)]);
    expect(out.bids[0]).toMatchObject({
      reason: BidLossReason.LostToDirect,
      lossCode: LossCode.LostToDirectSale,
    });
    expect(out.lossNotices).toEqual(['https://dsp.example/loss?a=a-1&b=b&s=s&l=1003&p=&m=']);
  });

  it('codes a rejected bid by its reason, a refused winner too, and leaves answers without a bid uncoded', () => {
    const refusedWinner = rtb(5_000_000, 'x');
    const winner = rtb(2_000_000, 'w');
    const records: BidRecord[] = [
      lost(refusedWinner),
      lost(winner),
      { dspId: 'dsp-r', status: 'rejected', reason: BidRejectionReason.BelowFloor, elapsedMs: 1 },
      { dspId: 'dsp-t', status: 'timeout', reason: 'timeout', elapsedMs: 1 },
    ];
    const out = settle([winner], records, new Map([[refusedWinner, 'image_timeout']]));
    expect(out.bids.map((b) => b.lossCode)).toEqual([LossCode.CreativeImageUnusable, 0, 100, undefined]);
    expect(out.lossNotices).toEqual(['https://dsp.example/loss?a=a-1&b=x&s=s&l=1002&p=&m=']);
  });

  it(`sends a DSP ${MAX_LOSS_NOTICES_PER_DSP} loss notices an auction at most, and counts the rest`, () => {
    const winner = rtb(9_000_000, 'w');
    const many = Array.from({ length: 10 }, (_, i) => ({
      ...rtb(1_000_000 + i, 'many'),
      creativeId: `m${i}`,
    }));
    const out = settle([winner, ...many], [lost(winner), ...many.map((c) => lost(c))]);
    expect(out.lossNotices).toHaveLength(MAX_LOSS_NOTICES_PER_DSP);
    expect(out.lossNoticesDropped).toBe(10 - MAX_LOSS_NOTICES_PER_DSP);
  });
});

describe('loss codes of the native image failures', () => {
  it.each([...IMAGE_FETCH_FAILURES, ...NATIVE_RENDER_FAILURES])(
    '%s, which rejects a native winner, has its code',
    (reason) => {
      expect(Object.hasOwn(LOSS_CODE_BY_REASON, reason)).toBe(true);
    },
  );
});
