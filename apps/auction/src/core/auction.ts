import type { Candidate } from './candidate';

/** One cent per thousand impressions, in micro-USD: the second-price increment. */
export const PRICE_INCREMENT_MICROS = 10_000;

export type AuctionType = 1 | 2;

/** Why a slot was left without an ad. */
export enum NoFillReason {
  NoDemand = 'no_demand',
}

export type AuctionOutcome =
  | {
      readonly filled: true;
      readonly winner: Candidate;
      /** What the winner pays, CPM micro-USD. */
      readonly clearingMicros: number;
      /** The paid candidates that lost, best first. */
      readonly losers: readonly Candidate[];
    }
  | { readonly filled: false; readonly reason: NoFillReason };

/** Direct before RTB at the same price: the publisher's own sale keeps the slot on a tie. */
const TIE_ORDER: Readonly<Record<Candidate['demandType'], number>> = {
  direct: 0,
  exchange: 1,
  house: 2,
  fallback_ads: 3,
};

function byPrice(a: Candidate, b: Candidate): number {
  return b.priceMicros - a.priceMicros || TIE_ORDER[a.demandType] - TIE_ORDER[b.demandType];
}

/**
 * The decision order of the README: the highest price among direct campaigns and valid RTB bids
 * wins; when none bids, a house ad fills the slot, then a fallback ad. A direct winner pays its
 * strategy's CPM. An RTB winner pays its bid in a first-price auction (`at` = 1); in a second-price
 * auction (`at` = 2) it pays the higher of the second price and its floor, plus one cent, never
 * more than its bid. House and fallback ads pay nothing. Stable: equal inputs give equal outcomes.
 */
export function decideAuction(
  paid: readonly Candidate[],
  fill: readonly Candidate[],
  at: AuctionType,
  pickFill: (candidates: readonly Candidate[]) => Candidate,
): AuctionOutcome {
  const ranked = [...paid].sort(byPrice);
  const [winner, ...losers] = ranked;
  if (winner) {
    return { filled: true, winner, clearingMicros: clearingPrice(winner, losers, at), losers };
  }
  const house = fill.filter((c) => c.demandType === 'house');
  const fallback = fill.filter((c) => c.demandType === 'fallback_ads');
  const pool = house.length > 0 ? house : fallback;
  if (pool.length === 0) {
    return { filled: false, reason: NoFillReason.NoDemand };
  }
  return { filled: true, winner: pickFill(pool), clearingMicros: 0, losers: [] };
}

export function clearingPrice(winner: Candidate, losers: readonly Candidate[], at: AuctionType): number {
  if (!winner.rtb || at === 1) {
    return winner.priceMicros;
  }
  const second = losers.reduce((max, c) => Math.max(max, c.priceMicros), 0);
  return Math.min(winner.priceMicros, Math.max(second, winner.rtb.floorMicros) + PRICE_INCREMENT_MICROS);
}
