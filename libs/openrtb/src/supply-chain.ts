import type { BidRequest, SupplyChain } from './openrtb.types';

/** How a seller sells on the exchange, as its sellers.json entry says (IAB sellers.json 1.0). */
export type SellerType = 'PUBLISHER' | 'INTERMEDIARY' | 'BOTH';

export interface SupplyChainSeller {
  /** The publisher's id on the exchange: its `seller_id` in our sellers.json. */
  readonly sellerId: string;
  readonly sellerType: SellerType;
}

/**
 * The supply chain of an auction (docs/dsp-integration.md#supply-chain): one node, the exchange's,
 * whose `asi` is the exchange's domain (where its sellers.json lives) and whose `sid` is the
 * seller's id there; the exchange pays the seller (`hp` 1). The chain is complete when the seller
 * owns the inventory (a publisher selling directly); an intermediary's upstream nodes are unknown
 * to us, so its chain is not.
 */
export function supplyChainOf(exchangeDomain: string, seller: SupplyChainSeller): SupplyChain {
  return {
    complete: seller.sellerType === 'INTERMEDIARY' ? 0 : 1,
    ver: '1.0',
    nodes: [{ asi: exchangeDomain, sid: seller.sellerId, hp: 1 }],
  };
}

/**
 * `source` in OpenRTB 2.5's places: the transaction id of the auction (`tid`) and the supply chain
 * in `ext.schain` (the IAB's 2.5 extension); `toOpenRtb26` moves it to `source.schain`. The
 * exchange decides the sale itself (`fd` 0: no upstream source takes the final decision).
 */
export function withSource(request: BidRequest, tid: string, schain: SupplyChain): BidRequest {
  const { user, ...rest } = request;
  // `user` stays last (see applyPrivacy).
  return { ...rest, source: { tid, fd: 0, ext: { schain } }, user };
}
