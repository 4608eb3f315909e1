import type { DemandType } from '@app/catalog';

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
  /** Markup and win notice URL before macro substitution. */
  readonly adm: string;
  readonly nurl?: string;
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
