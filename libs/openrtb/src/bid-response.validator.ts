import { checkMarkupText, type MarkupRejection } from './markup.extractor';
import type { Bid, BidRequest, Imp } from './openrtb.types';
import { MAX_BID_CPM_MICROS, MICROS_PER_USD, cpmToMicros } from './price';
import { isObject, isStringArray, preview } from './untrusted-json';

/** Why a DSP's answer holds no bid at all; the values go into events as they are. */
export enum NoBidReason {
  /**
   * HTTP 204, the bidding spec's one way to say no bid (part 7, docs/specification-notes.md#bidding-part-7).
   */
  NoContent = 'no_content',
  /** Any status outside 2xx. */
  HttpError = 'http_error',
  /** A 2xx with no body, or only whitespace. */
  EmptyBody = 'empty_body',
  /** Not JSON, not a JSON object, or `seatbid` not an array. */
  MalformedResponse = 'malformed_response',
  /** The DSP sent `nbr`, its reason for not bidding; any bids beside it are ignored. */
  DeclaredNoBid = 'declared_no_bid',
  /** `{}`. */
  EmptyObject = 'empty_object',
  /** An object (often just `{"id": ...}`) without `seatbid`. */
  NoSeatBid = 'no_seatbid',
  /** `seatbid: []`. */
  EmptySeatBid = 'empty_seatbid',
  /** Seat bids whose `bid` arrays are all empty. */
  NoBids = 'no_bids',
}

/**
 * Why one bid is refused. A bid gets the first reason that applies, in this order: the answer as
 * a whole, then the bid's shape, then what it bids on, its price, seat and deal, its advertiser
 * and categories, its markup type, and last its markup. SeatNotAllowed is checked twice: against the DSP's seats
 * before the deal checks, against the deal's `wseat` once the deal is known.
 */
export enum BidRejectionReason {
  /** The seat bid holding it is not an object with a `bid` array, or its `seat` is not a string. */
  MalformedSeatBid = 'malformed_seatbid',
  /** The response's `id` is not the request's: the answer belongs to another auction. */
  WrongRequestId = 'wrong_request_id',
  /**
   * The response's `cur` is not USD, the only bid currency (bidding part 8,
   * docs/specification-notes.md#bidding-part-8).
   */
  Currency = 'unsupported_currency',
  MalformedBid = 'malformed_bid',
  /** No `id`, or one that is not a non-empty string. */
  MissingId = 'missing_id',
  /** An `id` used by an earlier bid of the same response; the first one is kept. */
  DuplicateBidId = 'duplicate_bid_id',
  /** An optional field of the wrong JSON type (`adomain` a string, `crid` a number, ...). */
  InvalidField = 'invalid_field',
  /** `impid` is not one of the request's impressions. */
  UnknownImpression = 'unknown_impression',
  /** `price` is not a finite number above zero, or rounds to zero micro-USD. */
  InvalidPrice = 'invalid_price',
  /** `price` is above MAX_BID_CPM_MICROS. */
  AbsurdPrice = 'absurd_price',
  /** The seat is not one of the DSP's seats, or not in the deal's `wseat`. */
  SeatNotAllowed = 'seat_not_allowed',
  /** `dealid` is not among the impression's deals. */
  UnknownDeal = 'unknown_deal',
  /** The impression is a private auction (`private_auction` 1) and the bid names no deal. */
  DealRequired = 'deal_required',
  BelowDealFloor = 'below_deal_floor',
  BelowFloor = 'below_floor',
  /** No `adomain`, or an empty one: the spec describes it as required, and `badv` needs it. */
  MissingAdomain = 'missing_adomain',
  BlockedAdvertiser = 'blocked_advertiser',
  BlockedCategory = 'blocked_category',
  /**
   * No `adm`: serving the ad through the win notice is unsupported (bidding spec 4.1,
   * docs/specification-notes.md#bidding-part-4-1).
   */
  MissingMarkup = 'missing_markup',
  /** The markup cannot be served; `markup` says why. */
  InvalidMarkup = 'invalid_markup',
  /**
   * `mtype` (OpenRTB 2.6) names another kind of markup than the impression asks for: 1 (banner)
   * on a banner impression, 4 (native) on a native one.
   */
  WrongMarkupType = 'wrong_markup_type',
}

export interface BidResponseInput {
  readonly status: number;
  /** The body as read, size-limited by the caller; undefined when there was none. */
  readonly body: string | undefined;
  readonly request: BidRequest;
  /** The DSP's seats in the catalog; undefined accepts any seat. */
  readonly seats?: readonly string[];
}

export interface AcceptedBid {
  /** The bid's fields known to this library, each type-checked; the others are dropped. */
  readonly bid: Bid;
  readonly seat?: string;
  readonly impid: string;
  readonly priceMicros: number;
  readonly dealId?: string;
  /** The advertiser domains normalised as `badv` is matched: lower case, no scheme, path or `www.`. */
  readonly adomain: string[];
  /** The response's `bidid`, when it is a non-empty string: what `${AUCTION_BID_ID}` stands for. */
  readonly responseBidId?: string;
}

export interface RejectedBid {
  /** The bid's id, when it has a usable one. */
  readonly id?: string;
  readonly seat?: string;
  readonly impid?: string;
  readonly reason: BidRejectionReason;
  /** What exactly is wrong, for logs and for the DSP's integration team. */
  readonly detail: string;
  /** With InvalidMarkup: why the markup was refused. */
  readonly markup?: MarkupRejection;
  /** The bid as received, when it is an object: untrusted, for logs only. */
  readonly bid?: Readonly<Record<string, unknown>>;
  /** The bid's price, once it has passed the price checks. */
  readonly priceMicros?: number;
  /** The response's `bidid`, when it is a non-empty string. */
  readonly responseBidId?: string;
}

export interface BidResponseValidation {
  /** Set when the answer is no bid at all; `accepted` and `rejected` are then empty. */
  readonly noBid: NoBidReason | undefined;
  /** With a no-bid: what was received, for logs. */
  readonly detail?: string;
  readonly accepted: AcceptedBid[];
  readonly rejected: RejectedBid[];
}

/** Many DSP serialisers write `null` for a field they leave out; it counts as absent. */
function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

const isString = (value: unknown): boolean => typeof value === 'string';
const isPixelCount = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;
/** OpenRTB 2.6 list "Creative Markup Types": 1 banner, 2 video, 3 audio, 4 native. */
const isMarkupType = (value: unknown): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 4;

/** The `mtype` of the markup each kind of impression asks for. */
export const MARKUP_TYPE = { banner: 1, native: 4 } as const;

/** The optional fields a bid keeps, with the JSON type each must have when present. */
const OPTIONAL_FIELDS: readonly (readonly [keyof Bid, (value: unknown) => boolean, string])[] = [
  ['adm', isString, 'a string'],
  ['adomain', isStringArray, 'an array of strings'],
  ['adid', isString, 'a string'],
  ['nurl', isString, 'a string'],
  ['burl', isString, 'a string'],
  ['lurl', isString, 'a string'],
  ['cat', isStringArray, 'an array of strings'],
  ['cid', isString, 'a string'],
  ['crid', isString, 'a string'],
  ['dealid', isString, 'a string'],
  ['w', isPixelCount, 'a whole number of pixels'],
  ['h', isPixelCount, 'a whole number of pixels'],
  ['mtype', isMarkupType, 'a markup type (1 to 4)'],
];

/**
 * A domain as `badv` lists it: lower case, without a trailing dot or a leading `www.`. DSPs also
 * send URLs in `adomain`; their scheme, port and path are cut off, so that `https://WWW.Acme.com/x`
 * is matched as `acme.com`.
 */
export function normalizeDomain(domain: string): string {
  return domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/s, '')
    .replace(/\.+$/, '')
    .replace(/^www\./, '');
}

/** `badv` blocks a domain and its subdomains: `acme.com` blocks `ads.acme.com`, not `notacme.com`. */
function isBlockedDomain(domain: string, blocked: readonly string[]): boolean {
  return blocked.some((b) => domain === b || domain.endsWith(`.${b}`));
}

/** `bcat` blocks a category and its subcategories: `IAB7` blocks `IAB7-39`. Case is ignored. */
function isBlockedCategory(category: string, blocked: readonly string[]): boolean {
  const cat = category.trim().toUpperCase();
  return blocked.some((b) => cat === b || cat.startsWith(`${b}-`));
}

/** A floor from the exchange's own request, in micros; a floor no bid could reach blocks all. */
function floorMicros(floor: number | undefined): number {
  if (typeof floor !== 'number' || !(floor > 0)) {
    return 0;
  }
  return floor > MAX_BID_CPM_MICROS / MICROS_PER_USD ? Number.POSITIVE_INFINITY : cpmToMicros(floor);
}

interface Context {
  readonly imps: ReadonlyMap<string, Imp>;
  readonly badv: readonly string[];
  readonly bcat: readonly string[];
  readonly seats: ReadonlySet<string> | undefined;
  /** Why every bid of the answer is refused, when the answer as a whole is wrong. */
  readonly wholeAnswer: { reason: BidRejectionReason; detail: string } | undefined;
  readonly seenIds: Set<string>;
  readonly responseBidId: string | undefined;
}

type Outcome = { accepted: AcceptedBid } | { rejected: RejectedBid };

/** `s` and `b`: the bid's place in the answer, written into a rejection's detail (only then). */
function checkBid(raw: unknown, seat: string | undefined, s: number, b: number, ctx: Context): Outcome {
  const bid = isObject(raw) ? raw : undefined;
  const id = typeof bid?.id === 'string' && bid.id !== '' ? bid.id : undefined;
  const impid = typeof bid?.impid === 'string' ? bid.impid : undefined;
  const reject = (
    reason: BidRejectionReason,
    detail: string,
    more: Pick<RejectedBid, 'priceMicros' | 'markup'> = {},
  ): Outcome => ({
    rejected: {
      id,
      seat,
      impid,
      reason,
      detail: `seatbid[${s}].bid[${b}]: ${detail}`,
      bid,
      responseBidId: ctx.responseBidId,
      ...more,
    },
  });

  if (ctx.wholeAnswer) {
    return reject(ctx.wholeAnswer.reason, ctx.wholeAnswer.detail);
  }
  if (!bid) {
    return reject(BidRejectionReason.MalformedBid, `the bid is ${preview(raw)}, not an object`);
  }
  if (id === undefined) {
    return reject(BidRejectionReason.MissingId, `id is ${preview(bid.id)}`);
  }
  if (ctx.seenIds.has(id)) {
    return reject(BidRejectionReason.DuplicateBidId, `id ${preview(id)} is used twice`);
  }
  ctx.seenIds.add(id);
  for (const [field, valid, expected] of OPTIONAL_FIELDS) {
    const value = present(bid[field]);
    if (value !== undefined && !valid(value)) {
      return reject(BidRejectionReason.InvalidField, `${field} is ${preview(value)}, not ${expected}`);
    }
  }

  const imp = impid === undefined ? undefined : ctx.imps.get(impid);
  if (!imp) {
    return reject(BidRejectionReason.UnknownImpression, `impid ${preview(bid.impid)} is not in the request`);
  }

  const price = bid.price;
  if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) {
    return reject(BidRejectionReason.InvalidPrice, `price is ${preview(price)}, not a number above 0`);
  }
  if (price > MAX_BID_CPM_MICROS / MICROS_PER_USD) {
    return reject(BidRejectionReason.AbsurdPrice, `price ${price} is above the maximum CPM`);
  }
  const priceMicros = cpmToMicros(price);
  if (priceMicros === 0) {
    return reject(BidRejectionReason.InvalidPrice, `price ${price} rounds to 0 micro-USD`);
  }
  // From here on a rejection carries the price, for the bid event.
  const refuse = (reason: BidRejectionReason, detail: string, markup?: MarkupRejection): Outcome =>
    reject(reason, detail, { priceMicros, markup });

  if (ctx.seats && seat !== undefined && !ctx.seats.has(seat)) {
    return refuse(BidRejectionReason.SeatNotAllowed, `seat ${preview(seat)} is not one of the DSP's seats`);
  }
  // An empty dealid is how some DSPs write "no deal".
  const dealId = (present(bid.dealid) as string | undefined) || undefined;
  const deal = dealId === undefined ? undefined : imp.pmp?.deals?.find((d) => d.id === dealId);
  if (dealId !== undefined && !deal) {
    return refuse(
      BidRejectionReason.UnknownDeal,
      `dealid ${preview(dealId)} is not a deal of impression ${imp.id}`,
    );
  }
  if (!deal && imp.pmp?.private_auction === 1) {
    return refuse(BidRejectionReason.DealRequired, `impression ${imp.id} is a private auction`);
  }
  // An empty wseat restricts no more than an absent one.
  if (deal?.wseat?.length && (seat === undefined || !deal.wseat.includes(seat))) {
    return refuse(
      BidRejectionReason.SeatNotAllowed,
      `seat ${preview(seat)} is not allowed on deal ${deal.id}`,
    );
  }
  // A deal's floor replaces the impression's: the deal is the agreed price for that buyer.
  if (deal && priceMicros < floorMicros(deal.bidfloor)) {
    return refuse(BidRejectionReason.BelowDealFloor, `price ${price} is below deal ${deal.id}'s floor`);
  }
  if (!deal && priceMicros < floorMicros(imp.bidfloor)) {
    return refuse(BidRejectionReason.BelowFloor, `price ${price} is below the floor ${imp.bidfloor}`);
  }

  const adomain = ((present(bid.adomain) as string[] | undefined) ?? []).map(normalizeDomain).filter(Boolean);
  if (adomain.length === 0) {
    return refuse(BidRejectionReason.MissingAdomain, 'adomain is missing or empty');
  }
  const blockedDomain = adomain.find((d) => isBlockedDomain(d, ctx.badv));
  if (blockedDomain !== undefined) {
    return refuse(BidRejectionReason.BlockedAdvertiser, `advertiser ${preview(blockedDomain)} is blocked`);
  }
  const cat = (present(bid.cat) as string[] | undefined) ?? [];
  const blockedCat = cat.find((c) => isBlockedCategory(c, ctx.bcat));
  if (blockedCat !== undefined) {
    return refuse(BidRejectionReason.BlockedCategory, `category ${preview(blockedCat)} is blocked`);
  }

  const mtype = present(bid.mtype) as number | undefined;
  const wanted = imp.native ? MARKUP_TYPE.native : MARKUP_TYPE.banner;
  if (mtype !== undefined && mtype !== wanted) {
    return refuse(
      BidRejectionReason.WrongMarkupType,
      `mtype ${mtype} on impression ${imp.id}, which asks for ${wanted}`,
    );
  }

  const adm = present(bid.adm) as string | undefined;
  if (adm === undefined || adm === '') {
    return refuse(BidRejectionReason.MissingMarkup, 'adm is missing');
  }
  const markupProblem = checkMarkupText(adm);
  if (markupProblem) {
    return refuse(BidRejectionReason.InvalidMarkup, `adm is ${markupProblem}`, markupProblem);
  }

  const kept: Partial<Record<keyof Bid, unknown>> = { id, impid, price };
  for (const [field] of OPTIONAL_FIELDS) {
    const value = present(bid[field]);
    if (value !== undefined) {
      kept[field] = value;
    }
  }
  return {
    accepted: {
      bid: kept as Bid,
      seat,
      impid: imp.id,
      priceMicros,
      dealId: deal?.id,
      adomain,
      responseBidId: ctx.responseBidId,
    },
  };
}

function noBid(reason: NoBidReason, detail?: string): BidResponseValidation {
  return { noBid: reason, detail, accepted: [], rejected: [] };
}

/**
 * Validates a DSP's answer to one bid request: whether it is a no-bid (in any of its forms), and
 * which of its bids can enter the auction. Never throws, whatever the status and body. Markup is
 * only checked for presence and size here: its URLs are valid only once the macros are
 * substituted, which needs the clearing price, so the caller runs `extractMarkup` after pricing.
 */
export function validateBidResponse(input: BidResponseInput): BidResponseValidation {
  const { status, body, request } = input;
  if (status === 204) {
    return noBid(NoBidReason.NoContent);
  }
  if (!(status >= 200 && status < 300)) {
    return noBid(NoBidReason.HttpError, `HTTP ${status}`);
  }
  if (body === undefined || body.trim() === '') {
    return noBid(NoBidReason.EmptyBody);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return noBid(NoBidReason.MalformedResponse, `not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) {
    return noBid(NoBidReason.MalformedResponse, `the body is ${preview(parsed)}`);
  }
  if (present(parsed.nbr) !== undefined) {
    return noBid(NoBidReason.DeclaredNoBid, `nbr ${preview(parsed.nbr)}`);
  }
  if (Object.keys(parsed).length === 0) {
    return noBid(NoBidReason.EmptyObject);
  }
  const seatbids = present(parsed.seatbid);
  if (seatbids === undefined) {
    return noBid(NoBidReason.NoSeatBid);
  }
  if (!Array.isArray(seatbids)) {
    return noBid(NoBidReason.MalformedResponse, `seatbid is ${preview(seatbids)}, not an array`);
  }
  if (seatbids.length === 0) {
    return noBid(NoBidReason.EmptySeatBid);
  }

  const cur = present(parsed.cur);
  const imps = new Map<string, Imp>();
  for (const imp of request.imp) {
    if (!imps.has(imp.id)) {
      imps.set(imp.id, imp);
    }
  }
  const ctx: Context = {
    imps,
    badv: (request.badv ?? []).map(normalizeDomain).filter(Boolean),
    bcat: (request.bcat ?? []).map((c) => c.trim().toUpperCase()),
    seats: input.seats && new Set(input.seats),
    wholeAnswer:
      parsed.id !== request.id
        ? {
            reason: BidRejectionReason.WrongRequestId,
            detail: `response id ${preview(parsed.id)} is not the request's`,
          }
        : cur !== undefined && cur !== 'USD'
          ? { reason: BidRejectionReason.Currency, detail: `currency ${preview(cur)} is not USD` }
          : undefined,
    seenIds: new Set(),
    responseBidId: typeof parsed.bidid === 'string' && parsed.bidid !== '' ? parsed.bidid : undefined,
  };

  const accepted: AcceptedBid[] = [];
  const rejected: RejectedBid[] = [];
  let bids = 0;
  for (const [s, seatbid] of seatbids.entries()) {
    const where = `seatbid[${s}]`;
    if (!isObject(seatbid) || !Array.isArray(seatbid.bid)) {
      const what = isObject(seatbid) ? `its bid is ${preview(seatbid.bid)}` : `it is ${preview(seatbid)}`;
      rejected.push({
        reason: BidRejectionReason.MalformedSeatBid,
        detail: `${where}: ${what}, not an array`,
      });
      continue;
    }
    const seat = present(seatbid.seat);
    if (seat !== undefined && typeof seat !== 'string') {
      rejected.push({
        reason: BidRejectionReason.MalformedSeatBid,
        detail: `${where}: seat is ${preview(seat)}`,
      });
      continue;
    }
    for (const [b, raw] of (seatbid.bid as unknown[]).entries()) {
      bids += 1;
      const outcome = checkBid(raw, seat, s, b, ctx);
      if ('accepted' in outcome) {
        accepted.push(outcome.accepted);
      } else {
        rejected.push(outcome.rejected);
      }
    }
  }
  if (bids === 0 && rejected.length === 0) {
    return noBid(NoBidReason.NoBids);
  }
  return { noBid: undefined, accepted, rejected };
}

/** The rejection of a bid accepted here whose markup `extractMarkup` then refused. */
export function rejectMarkup(accepted: AcceptedBid, markup: MarkupRejection): RejectedBid {
  return {
    id: accepted.bid.id,
    seat: accepted.seat,
    impid: accepted.impid,
    reason: BidRejectionReason.InvalidMarkup,
    detail: `adm is ${markup}`,
    markup,
    bid: { ...accepted.bid },
    priceMicros: accepted.priceMicros,
    responseBidId: accepted.responseBidId,
  };
}
