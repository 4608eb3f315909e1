import { describe, expect, it } from 'vitest';
import { BidRejectionReason } from './bid-response.validator';
import {
  BidLossReason,
  LOSS_CODE_BY_REASON,
  LOSS_CODE_DESCRIPTIONS,
  LossCode,
  lossCodeOf,
} from './loss-reason';
import { NativeRejection } from './native/native-response.validator';

/** OpenRTB 2.5 list 5.25 as the specification numbers it. */
const LIST_5_25 = [
  0,
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  8,
  9,
  10,
  100,
  101,
  102,
  103,
  104,
  ...Array.from({ length: 14 }, (_, i) => 200 + i),
];

const codes = Object.values(LossCode).filter((v): v is number => typeof v === 'number');

describe('loss reason codes', () => {
  it('holds every code of list 5.25, and ours from 1000 on', () => {
    expect(codes.filter((c) => c < 1000)).toEqual(LIST_5_25);
    expect(codes.filter((c) => !LIST_5_25.includes(c)).every((c) => c >= 1000)).toBe(true);
  });

  it('describes every code', () => {
    expect(
      Object.keys(LOSS_CODE_DESCRIPTIONS)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual(codes);
    expect(Object.values(LOSS_CODE_DESCRIPTIONS).every((d) => d.length > 5)).toBe(true);
  });

  it.each([
    ...Object.values(BidRejectionReason),
    ...Object.values(NativeRejection),
    ...Object.values(BidLossReason),
  ])('maps %s onto a code', (reason) => {
    expect(Object.hasOwn(LOSS_CODE_BY_REASON, reason)).toBe(true);
    expect(codes).toContain(LOSS_CODE_BY_REASON[reason]);
  });

  it.each([
    ['won', undefined, LossCode.BidWon],
    ['lost', BidLossReason.LostToHigherBid, LossCode.LostToHigherBid],
    ['lost', BidLossReason.LostToDeal, LossCode.LostToPmpDeal],
    ['lost', BidLossReason.LostToDirect, LossCode.LostToDirectSale],
    ['rejected', BidRejectionReason.BelowFloor, LossCode.BelowAuctionFloor],
    ['rejected', BidRejectionReason.BelowDealFloor, LossCode.BelowDealFloor],
    ['rejected', BidRejectionReason.BlockedAdvertiser, LossCode.CreativeFilteredAdvertiserExclusions],
    ['rejected', BidRejectionReason.WrongRequestId, LossCode.InvalidAuctionId],
    ['rejected', BidRejectionReason.AbsurdPrice, LossCode.AbsurdPrice],
    ['rejected', 'image_timeout', LossCode.CreativeImageUnusable],
    ['rejected', 'something_new', LossCode.CreativeFilteredGeneral],
    ['rejected', 'constructor', LossCode.CreativeFilteredGeneral],
    ['rejected', '__proto__', LossCode.CreativeFilteredGeneral],
    ['rejected', undefined, LossCode.CreativeFilteredGeneral],
    ['no_bid', 'no_content', undefined],
    ['timeout', 'timeout', undefined],
    ['error', 'too_large', undefined],
  ])('a %s bid (%s) has code %s', (status, reason, code) => {
    expect(lossCodeOf(status, reason)).toBe(code);
  });
});
