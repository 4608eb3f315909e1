import type { NativeRequest } from './native/native.types';

/**
 * The subset of OpenRTB 2.5 the exchange sends to DSPs and accepts back (bidding spec part 2,
 * docs/specification-notes.md#bidding-part-2). Optional here means optional in OpenRTB 2.5; fields the spec
 * calls "recommended" are optional too. Money is a CPM in USD as a float on the wire; the exchange converts
 * it to micro-USD (price.ts).
 */

export interface BidRequest {
  id: string;
  /** At least one. */
  imp: Imp[];
  site?: Site;
  device?: Device;
  user?: User;
  /** Auction type: 1 first price, 2 second price (default). */
  at?: 1 | 2;
  /** Milliseconds; the spec's implicit value is 150. */
  tmax?: number;
  cur?: string[];
  /** Blocked IAB content categories. */
  bcat?: string[];
  /** Blocked advertisers, by domain. */
  badv?: string[];
  /** 1 = test mode, the auction is not billable. */
  test?: 0 | 1;
  source?: Source;
  regs?: Regs;
  ext?: Record<string, unknown>;
}

/**
 * The privacy regulations of the request (privacy.ts): OpenRTB 2.5 puts all but `coppa` in `ext`
 * (the IAB's GDPR, CCPA and GPP extensions), 2.6 on the object itself.
 */
export interface Regs {
  /** 1 = the request falls under COPPA. */
  coppa?: 0 | 1;
  /** 2.6 places; 2.5 has them in `ext`. */
  gdpr?: 0 | 1;
  us_privacy?: string;
  gpp?: string;
  gpp_sid?: number[];
  ext?: { gdpr?: 0 | 1; us_privacy?: string; gpp?: string; gpp_sid?: number[] };
}

/** Where the request comes from: the transaction and the supply chain (schain.ts). */
export interface Source {
  /** Transaction id, common to every participant of the auction. */
  tid?: string;
  /** 1 = the exchange makes the final sale decision. */
  fd?: 0 | 1;
  /** 2.6 place; 2.5 has it in `ext.schain`. */
  schain?: SupplyChain;
  ext?: { schain?: SupplyChain };
}

/** The IAB SupplyChain object (version 1.0). */
export interface SupplyChain {
  /** 1 = every node from the inventory's owner on is listed. */
  complete: 0 | 1;
  ver: '1.0';
  nodes: SupplyChainNode[];
}

export interface SupplyChainNode {
  /** The canonical domain of the system that takes part in the sale (its sellers.json host). */
  asi: string;
  /** The seller's id in that system's sellers.json. */
  sid: string;
  /** 1 = the node handles the payment; always 1 for the exchange. */
  hp: 0 | 1;
  rid?: string;
  name?: string;
  domain?: string;
}

export interface Imp {
  id: string;
  tagid?: string;
  /** CPM; 0 when omitted. */
  bidfloor?: number;
  bidfloorcur?: string;
  /** 1 = HTTPS assets required. */
  secure?: 0 | 1;
  banner?: Banner;
  native?: NativeImp;
  pmp?: Pmp;
}

export interface Banner {
  w?: number;
  h?: number;
  id?: string;
  pos?: number;
  /** Blocked creative types; the spec blocks every type but 2 (HTML). */
  btype?: number[];
  battr?: number[];
}

/**
 * OpenRTB 2.5 makes `request` a JSON-encoded string, as every public fixture and the schema do; the
 * specification puts the object itself there. The exchange sends the object unless the DSP's catalog entry
 * asks for the string (docs/exchange.md#native-11).
 */
export interface NativeImp {
  request: string | NativeRequest;
  ver?: string;
  api?: number[];
  battr?: number[];
}

export interface Site {
  id?: string;
  domain?: string;
  name?: string;
  cat?: string[];
  /**
   * Custom URL representing the domain and category (bidding spec 2.4,
   * docs/specification-notes.md#bidding-part-2-4).
   */
  page?: string;
  publisher?: Publisher;
}

export interface Publisher {
  id?: string;
  name?: string;
  domain?: string;
  cat?: string[];
}

export interface Device {
  ip?: string;
  ua?: string;
  language?: string;
  geo?: Geo;
  devicetype?: number;
  make?: string;
  model?: string;
  os?: string;
}

export interface Geo {
  /** ISO-3166-1 alpha-3, as OpenRTB 2.5 (and its schema) require. */
  country?: string;
  region?: string;
  metro?: string;
  city?: string;
  zip?: string;
  /** Source of the location: an integer in OpenRTB 2.5, although the spec's table says string. */
  type?: number;
}

export interface User {
  id?: string;
  buyeruid?: string;
  customdata?: string;
  data?: Data[];
  /** 2.6 place of the TCF consent string; 2.5 has it in `ext.consent`. */
  consent?: string;
  ext?: { consent?: string };
}

export interface Data {
  id?: string;
  name?: string;
  segment?: Segment[];
}

export interface Segment {
  id?: string;
  name?: string;
  value?: string;
}

export interface Pmp {
  /** 1 = only bids on the listed deals are accepted. */
  private_auction?: 0 | 1;
  deals?: Deal[];
}

export interface Deal {
  id: string;
  /** CPM; 0 when omitted. */
  bidfloor?: number;
  bidfloorcur?: string;
  at?: number;
  /** Allowed buyer seats; omitted means no seat restriction. */
  wseat?: string[];
}

export interface BidResponse {
  /** The bid request's id. */
  id: string;
  seatbid?: SeatBid[];
  bidid?: string;
  cur?: string;
  customdata?: string;
  /** Reason for not bidding. */
  nbr?: number;
}

export interface SeatBid {
  bid: Bid[];
  seat?: string;
}

export interface Bid {
  id: string;
  impid: string;
  /** CPM in the response currency. */
  price: number;
  adm?: string;
  adomain?: string[];
  adid?: string;
  nurl?: string;
  /** Billing notice URL, called when the impression becomes billable (its first view). */
  burl?: string;
  /** Loss notice URL, called when the bid is known to have lost, for DSPs that ask for them. */
  lurl?: string;
  cat?: string[];
  cid?: string;
  crid?: string;
  dealid?: string;
  w?: number;
  h?: number;
  /** OpenRTB 2.6: the markup's type, 1 banner, 2 video, 3 audio, 4 native. */
  mtype?: number;
}
