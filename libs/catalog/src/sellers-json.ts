import type { Catalog } from './catalog';
import type { PublisherRecord, SellerType } from './catalog.schema';

/** A publisher as a seller on the exchange: its sellers.json id and type. */
export interface Seller {
  readonly sellerId: string;
  readonly sellerType: SellerType;
}

/** The seller a publisher is: its `sellerId` (its own id when absent), `PUBLISHER` unless it says. */
export function sellerOf(publisher: PublisherRecord): Seller {
  return { sellerId: publisher.sellerId ?? publisher.id, sellerType: publisher.sellerType ?? 'PUBLISHER' };
}

/** One entry of sellers.json (IAB Tech Lab sellers.json 1.0). */
export interface SellersJsonSeller {
  seller_id: string;
  /** 1: name and domain are not disclosed. */
  is_confidential: 0 | 1;
  seller_type: SellerType;
  name?: string;
  domain?: string;
}

export interface SellersJson {
  contact_email?: string;
  contact_address?: string;
  version: '1.0';
  sellers: SellersJsonSeller[];
}

export interface SellersJsonContact {
  readonly contactEmail?: string;
  readonly contactAddress?: string;
}

/**
 * The exchange's sellers.json (IAB sellers.json 1.0, docs/dsp-integration.md#sellersjson): every
 * publisher whose account is active, as the seller its catalog entry says, by `seller_id`; a
 * confidential one without its name and domain. A buyer finds here the `sid` of a supply chain
 * node whose `asi` is our domain, and the seller id of a publisher's ads.txt line.
 */
export function buildSellersJson(catalog: Catalog, contact: SellersJsonContact): SellersJson {
  const sellers = catalog.document.publishers
    .filter((p) => catalog.accounts.get(p.accountId)?.status === 'active')
    .map((p): SellersJsonSeller => {
      const { sellerId, sellerType } = sellerOf(p);
      return p.confidential
        ? { seller_id: sellerId, is_confidential: 1, seller_type: sellerType }
        : {
            seller_id: sellerId,
            is_confidential: 0,
            seller_type: sellerType,
            name: p.name,
            domain: p.domain,
          };
    })
    .sort((a, b) => (a.seller_id < b.seller_id ? -1 : a.seller_id > b.seller_id ? 1 : 0));
  return {
    ...(contact.contactEmail ? { contact_email: contact.contactEmail } : {}),
    ...(contact.contactAddress ? { contact_address: contact.contactAddress } : {}),
    version: '1.0',
    sellers,
  };
}
