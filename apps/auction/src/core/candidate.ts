import type { DemandType } from '@app/catalog';
import type { BidStatus } from '@app/events';
import type { MacroValues, NativeRequest } from '@app/openrtb';

/**
 * What the macros of a bid stand for beside the auction's outcome: the ids of OpenRTB 2.5 section
 * 4.4 (`AUCTION_ID`, `AUCTION_BID_ID`, `AUCTION_IMP_ID`, `AUCTION_SEAT_ID`, `AUCTION_AD_ID`).
 */
export type BidMacroIds = Pick<MacroValues, 'auctionId' | 'bidId' | 'impId' | 'seatId' | 'adId'>;

/** Where an RTB candidate came from, for pricing, macros, the win notice and the events. */
export interface RtbOrigin {
  readonly dspId: string;
  readonly seat: string;
  readonly bidId: string;
  readonly impId: string;
  readonly adId: string;
  readonly dealId?: string;
  /** The floor the bid had to clear: the deal's when bid on a deal, else the slot's. */
  readonly floorMicros: number;
  /** `AUCTION_BID_ID`: the response's `bidid`, or the bid's `id` when the response has none. */
  readonly macroBidId: string;
  /** Markup and notice URLs before macro substitution: win, billing, loss. */
  readonly adm: string;
  readonly nurl?: string;
  readonly burl?: string;
  readonly lurl?: string;
  /** The crid (or adid, or bid id): what names the creative for caching a flattened native ad. */
  readonly crid: string;
  /** For a native impression: the native request the markup answers. */
  readonly nativeRequest?: NativeRequest;
}

/** One ad that could fill the slot, with what it bids (CPM, micro-USD). */
export interface Candidate {
  readonly demandType: DemandType;
  readonly priceMicros: number;
  readonly strategyId: string;
  readonly creativeId: string;
  readonly advertiserDomain: string;
  /** Catalog creatives: the image and landing page. RTB creatives get theirs from the markup. */
  readonly imageUrl?: string;
  readonly clickUrl?: string;
  readonly rtb?: RtbOrigin;
}

/** What became of one DSP's answer, or of one bid in it, as the DSP's answers were judged. */
export interface BidRecord {
  readonly dspId: string;
  readonly status: BidStatus;
  readonly reason?: string;
  readonly priceMicros?: number;
  readonly dealId?: string;
  readonly seat?: string;
  readonly candidate?: Candidate;
  readonly elapsedMs: number;
  /** A bid's loss notice URL before macro substitution, and its ids for the macros. */
  readonly lurl?: string;
  readonly macroIds?: BidMacroIds;
}

/** What an ad shows and where it leads, macros filled in with the clearing price. */
export interface Creative {
  readonly imageUrl: string;
  readonly clickUrl: string;
  readonly impressionTrackers: readonly string[];
  readonly clickTrackers: readonly string[];
}
