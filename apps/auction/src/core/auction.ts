import type { BidStatus } from '@app/events';
import { BidLossReason, lossCodeOf, substituteMacros } from '@app/openrtb';
import type { AdContext } from './ad-context';
import { impressionMoney, type AdDecision } from './ad-decision';
import type { BidRecord, Candidate, Creative } from './candidate';
import { NO_WINNER, contextDimensionsOf, type WinnerDimensions } from './event-dimensions';

/** One cent per thousand impressions, in micro-USD: the second-price increment. */
export const PRICE_INCREMENT_MICROS = 10_000;

/**
 * Loss notices a DSP gets for one auction at most: we send one impression, so a DSP has a bid or
 * two (one per seat); a response of a thousand bids with a `lurl` each must not make a thousand
 * calls. The ones past it are counted as dropped.
 */
export const MAX_LOSS_NOTICES_PER_DSP = 4;

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
 * The decision order of docs/exchange.md#demand-and-the-decision-order: the highest price among direct
 * campaigns and valid RTB bids wins; when none bids, a house ad fills the slot, then a fallback ad. A direct
 * winner pays its strategy's CPM. An RTB winner pays its bid in a first-price auction (`at` = 1); in a
 * second-price auction (`at` = 2) it pays the higher of the second price and its floor, plus one cent, never
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

/** What became of one DSP answer or bid once the auction is over: the content of a `bid` event. */
export interface SettledBid {
  readonly dspId: string;
  readonly status: BidStatus;
  readonly reason?: string;
  readonly priceMicros?: number;
  readonly dealId?: string;
  /** The lineage of the bid's candidate; all empty for an answer without one. */
  readonly winner: WinnerDimensions;
  /**
   * The bid's loss reason code (OpenRTB 2.5 list 5.25, ours from 1000; loss-reason.ts): 0 when it
   * won; absent for an answer without a bid.
   */
  readonly lossCode?: number;
}

/** An auction once over: the decision to keep, every answer's fate, the win notice to call. */
export interface SettledAuction {
  /** When the auction ran. */
  readonly at: Date;
  readonly decision: AdDecision;
  /** Why the slot was left empty, when it was. */
  readonly noFillReason?: NoFillReason;
  readonly bids: readonly SettledBid[];
  /** The winner's win notice, macros substituted, to call server to server. */
  readonly winNotice?: string;
  /** The winner's billing notice, macros substituted, to call at the first view of the ad. */
  readonly billingNotice?: string;
  /**
   * The loss notices of the lost and rejected bids of DSPs that asked for them, macros substituted
   * (the loss code; the clearing price is not disclosed), at most MAX_LOSS_NOTICES_PER_DSP a DSP.
   */
  readonly lossNotices: readonly string[];
  /** Loss notices left out past MAX_LOSS_NOTICES_PER_DSP. */
  readonly lossNoticesDropped: number;
  /** Time spent waiting for DSP answers, ms. */
  readonly dspWaitMs: number;
}

export interface Settlement {
  readonly ctx: AdContext;
  /** The last decision of the auction: the winner whose creative could be made, or no fill. */
  readonly outcome: AuctionOutcome;
  readonly creative?: Creative;
  readonly records: readonly BidRecord[];
  /** Winners refused on the way because their creative could not be made, with why. */
  readonly refused: ReadonlyMap<Candidate, string>;
  readonly winnerDimensions: (candidate: Candidate) => WinnerDimensions;
  readonly winNotice?: string;
  readonly billingNotice?: string;
  readonly dspWaitMs: number;
}

/**
 * Why a valid bid lost to the winner: to the publisher's direct campaign, to a bid on a deal it was
 * not on, or to a higher bid.
 */
function lossReasonOf(loser: Candidate, winner: Candidate): BidLossReason {
  if (!winner.rtb) {
    return BidLossReason.LostToDirect;
  }
  if (winner.rtb.dealId !== undefined && loser.rtb?.dealId === undefined) {
    return BidLossReason.LostToDeal;
  }
  return BidLossReason.LostToHigherBid;
}

/**
 * Settles an auction into one immutable outcome: the decision (with its money at the publisher's
 * share) and the final status of every answer, the winner's `won`, a refused winner's `rejected`,
 * a loser's `lost` with why; each bid's loss code, and the loss notices of the DSPs that want them.
 */
export function settleAuction(s: Settlement): SettledAuction {
  const { ctx, outcome } = s;
  const winner = outcome.filled && s.creative ? outcome.winner : undefined;
  const clearingMicros = winner && outcome.filled ? outcome.clearingMicros : 0;
  const money = winner ? impressionMoney(clearingMicros, ctx.publisher.exchangeShare) : impressionMoney(0, 0);
  const decision: AdDecision = {
    auctionId: ctx.auctionId,
    userId: ctx.viewer.userId,
    filled: winner !== undefined,
    imageUrl: s.creative?.imageUrl,
    clickUrl: s.creative?.clickUrl,
    impressionTrackers: s.creative?.impressionTrackers ?? [],
    billingNotice: winner ? s.billingNotice : undefined,
    clickTrackers: s.creative?.clickTrackers ?? [],
    context: contextDimensionsOf(ctx),
    winner: winner ? s.winnerDimensions(winner) : NO_WINNER,
    dspId: winner?.rtb?.dspId,
    dealId: winner?.rtb?.dealId,
    clearingMicros,
    ...money,
  };
  const lossNotices: string[] = [];
  const noticesByDsp = new Map<string, number>();
  let lossNoticesDropped = 0;
  const bids = s.records.map((record): SettledBid => {
    const refused = record.candidate && s.refused.get(record.candidate);
    const status = winner && record.candidate === winner ? 'won' : refused ? 'rejected' : record.status;
    const reason =
      refused ||
      record.reason ||
      (status === 'lost' && winner && record.candidate ? lossReasonOf(record.candidate, winner) : undefined);
    const lossCode = lossCodeOf(status, reason);
    if (record.lurl !== undefined && record.macroIds && lossCode !== undefined && status !== 'won') {
      const sent = noticesByDsp.get(record.dspId) ?? 0;
      if (sent < MAX_LOSS_NOTICES_PER_DSP) {
        noticesByDsp.set(record.dspId, sent + 1);
        lossNotices.push(
          substituteMacros(record.lurl, { ...record.macroIds, bidPriceMicros: record.priceMicros, lossCode }),
        );
      } else {
        lossNoticesDropped += 1;
      }
    }
    return {
      dspId: record.dspId,
      status,
      reason,
      priceMicros: record.priceMicros,
      dealId: record.dealId,
      winner: record.candidate ? s.winnerDimensions(record.candidate) : NO_WINNER,
      lossCode,
    };
  });
  return {
    at: ctx.now,
    decision,
    noFillReason: outcome.filled ? undefined : outcome.reason,
    bids,
    winNotice: winner ? s.winNotice : undefined,
    billingNotice: winner ? s.billingNotice : undefined,
    lossNotices,
    lossNoticesDropped,
    dspWaitMs: s.dspWaitMs,
  };
}
