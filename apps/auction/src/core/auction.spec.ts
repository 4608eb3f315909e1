import { describe, expect, it } from 'vitest';
import { clearingPrice, decideAuction, NoFillReason } from './auction';
import type { Candidate } from './candidate';

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
