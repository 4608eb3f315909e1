import type { EventDimensions } from '@app/events';
import type { ContextDimensions, WinnerDimensions } from './event-dimensions';

/**
 * The ad chosen for a (slot, placement, viewer), kept in the state store so that a reopen shows
 * the same ad and a click goes where the ad said. Money is micro-USD.
 */
export interface AdDecision {
  readonly auctionId: string;
  readonly userId: string;
  readonly filled: boolean;
  readonly imageUrl?: string;
  readonly clickUrl?: string;
  /** Fired server to server on the first view (the markup's tracking images). */
  readonly impressionTrackers: readonly string[];
  /**
   * The winner's billing notice (`burl`, macros substituted), fired server to server on the first
   * view: the moment the impression becomes billable, as its spend is booked.
   */
  readonly billingNotice?: string;
  /** Fired server to server on each click. */
  readonly clickTrackers: readonly string[];
  /** The slot, tag and viewer dimensions at the time of the decision. */
  readonly context: ContextDimensions;
  /** The winner's lineage; all empty when the slot was left unfilled. */
  readonly winner: WinnerDimensions;
  readonly dspId?: string;
  readonly dealId?: string;
  /** What the winner pays per thousand impressions. */
  readonly clearingMicros: number;
  /** Spend and revenue of the first view of this ad (0 in a decision read back once viewed). */
  readonly spendMicros: number;
  readonly revenueMicros: number;
}

/** Every dimension of the decision, as its events carry them. */
export function decisionDimensions(decision: AdDecision): EventDimensions {
  return { ...decision.context, ...decision.winner };
}

/** Spend of one impression at a CPM, and the publisher's revenue from it after the exchange's share. */
export function impressionMoney(
  clearingCpmMicros: number,
  exchangeShare: number,
): { spendMicros: number; revenueMicros: number } {
  const spendMicros = Math.round(clearingCpmMicros / 1000);
  return { spendMicros, revenueMicros: Math.round(spendMicros * (1 - exchangeShare)) };
}
