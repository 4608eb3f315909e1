import { microsToCpm } from './price';

/**
 * What the substitution macros of one bid stand for: the won bid's in its markup, win and billing
 * notices, a lost or rejected bid's in its loss notice.
 */
export interface MacroValues {
  /** The bid request's id. */
  readonly auctionId: string;
  /** The bid's impression id (`bid.impid`). */
  readonly impId: string;
  /** The bid's `adid`; the macro becomes empty when the bid has none. */
  readonly adId?: string;
  /**
   * `BidResponse.bidid`, as OpenRTB 2.5 defines `AUCTION_BID_ID`; the caller passes the bid's own
   * `id` when the response has no `bidid` (docs/dsp-integration.md#macros).
   */
  readonly bidId?: string;
  /** The seat the bid was made for (`seatbid.seat`, or the DSP's first seat when it named none). */
  readonly seatId?: string;
  /**
   * The clearing price, CPM in micro-USD; undefined makes `AUCTION_PRICE` and `AUCTION_MBR`
   * empty (a loss notice: the winning price is not disclosed to the losers).
   */
  readonly priceMicros?: number;
  /** The bid's own price, CPM in micro-USD: `AUCTION_MBR` is the clearing price over it. */
  readonly bidPriceMicros?: number;
  /** The loss reason code (OpenRTB 2.5 list 5.25, `loss-reason.ts`): 0 for the winner. */
  readonly lossCode?: number;
}

interface MacroDefinition {
  /** What the macro stands for, as the DSP integration page shows it. */
  readonly description: string;
  readonly value: (values: MacroValues) => string;
}

/**
 * The only currency the exchange bids and settles in (bidding part 8,
 * docs/specification-notes.md#bidding-part-8).
 */
export const AUCTION_CURRENCY = 'USD';

/** Clearing price over bid price, at most four decimals: `0.8667`, `1`. */
function marketBidRatio(values: MacroValues): string {
  const { priceMicros, bidPriceMicros } = values;
  if (priceMicros === undefined || bidPriceMicros === undefined || !(bidPriceMicros > 0)) {
    return '';
  }
  return String(Math.round((priceMicros / bidPriceMicros) * 10_000) / 10_000);
}

/**
 * OpenRTB 2.5's substitution macros (section 4.4), by name, in the specification's order: the one
 * table that substitution, the DSP integration page (docs/dsp-integration.md#macros, checked by
 * `macro.substitution.spec.ts`) and the tests are derived from.
 */
export const AUCTION_MACROS = {
  AUCTION_ID: { description: 'ID of the bid request (`BidRequest.id`)', value: (v) => v.auctionId },
  AUCTION_BID_ID: {
    description: "ID of the bid (`BidResponse.bidid`; the bid's `id` when the response has none)",
    value: (v) => v.bidId ?? '',
  },
  AUCTION_IMP_ID: { description: 'ID of the impression just won (`Bid.impid`)', value: (v) => v.impId },
  AUCTION_SEAT_ID: {
    description: 'ID of the bidder seat the bid was made for (`SeatBid.seat`)',
    value: (v) => v.seatId ?? '',
  },
  AUCTION_AD_ID: {
    description: 'ID of the ad markup the bidder wishes to serve (`Bid.adid`)',
    value: (v) => v.adId ?? '',
  },
  AUCTION_PRICE: {
    description: 'Clearing price, CPM in the currency of the bid (USD); empty in a loss notice',
    value: (v) => (v.priceMicros === undefined ? '' : microsToCpm(v.priceMicros)),
  },
  AUCTION_CURRENCY: {
    description: 'Currency of the bid and the price: `USD`',
    value: () => AUCTION_CURRENCY,
  },
  AUCTION_MBR: {
    description: 'Market bid ratio: clearing price over bid price; empty in a loss notice',
    value: marketBidRatio,
  },
  AUCTION_LOSS: {
    description: 'Loss reason code (OpenRTB 2.5 list 5.25; 0 for the winner, ours from 1000)',
    value: (v) => (v.lossCode === undefined ? '' : String(v.lossCode)),
  },
} as const satisfies Record<string, MacroDefinition>;

export type AuctionMacro = keyof typeof AUCTION_MACROS;

/** Case-sensitive, as OpenRTB's macros are: `${auction_price}` is not a macro. */
export const MACRO_PATTERN = new RegExp(`\\$\\{(${Object.keys(AUCTION_MACROS).join('|')})\\}`, 'g');

/**
 * The longest value a macro can take with these values, in characters before encoding: what a
 * size check of substituted text must allow for each macro it holds.
 */
export function longestMacroValue(values: MacroValues): number {
  let longest = 0;
  for (const definition of Object.values(AUCTION_MACROS) as MacroDefinition[]) {
    longest = Math.max(longest, definition.value(values).length);
  }
  return longest;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Percent-encodes everything but RFC 3986's unreserved characters. Macros sit inside URLs inside
 * HTML attributes, and an id (the DSP's adid above all) may hold anything: encoded, it can neither
 * end the attribute (`"`, `'`, `>`) nor change the URL's structure (`&`, `#`, `/`, `?`).
 */
function urlSafe(value: string): string {
  // encodeURIComponent throws on a lone surrogate; a DSP's adid must not make substitution throw.
  return encodeURIComponent(value.replace(LONE_SURROGATE, '\uFFFD')).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Substitutes OpenRTB 2.5's macros (bidding part 6, docs/specification-notes.md#bidding-part-6) wherever
 * they occur ("without regard to syntax"), in one pass: a value that itself reads `${AUCTION_PRICE}` stays
 * as it is (and is encoded anyway), so that no value can bring in another macro's value.
 */
export function substituteMacros(text: string, values: MacroValues): string {
  return text.replace(MACRO_PATTERN, (_match, name: AuctionMacro) =>
    urlSafe(AUCTION_MACROS[name].value(values)),
  );
}

/** Browsers and mail readers cap URLs around here; longer ones are either broken or abusive. */
export const MAX_URL_LENGTH = 2048;

function hasSpaceOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || (code >= 0x7f && code <= 0x9f)) {
      return true;
    }
  }
  return /\s/.test(text);
}

/**
 * An absolute http(s) URL that can go into an email as it is: no whitespace or control
 * characters (which parsers strip or reject in different ways), no credentials, at most
 * MAX_URL_LENGTH characters. The scheme is checked on the text itself, since `new URL` also
 * accepts `http:/host` and `http:\\host`.
 */
export function isHttpUrl(url: string): boolean {
  if (typeof url !== 'string' || url.length > MAX_URL_LENGTH) {
    return false;
  }
  if (!/^https?:\/\//i.test(url) || hasSpaceOrControl(url)) {
    return false;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return parsed.username === '' && parsed.password === '';
}
