import { microsToCpm } from './price';

/** What the macros of one won bid stand for. */
export interface MacroValues {
  /** The bid request's id. */
  readonly auctionId: string;
  /** The won impression's id (`bid.impid`). */
  readonly impId: string;
  /** The bid's `adid`; the macro becomes empty when the bid has none. */
  readonly adId?: string;
  /** The settlement (clearing) price, CPM in micro-USD. */
  readonly priceMicros: number;
}

interface MacroDefinition {
  readonly description: string;
  readonly value: (values: MacroValues) => string;
}

/**
 * The substitution macros of bidding spec part 6 (docs/specification-notes.md#bidding-part-6), by name: the
 * substitution is derived from this table.
 */
export const AUCTION_MACROS = {
  AUCTION_ID: { description: 'Id of the bid request', value: (v) => v.auctionId },
  AUCTION_IMP_ID: { description: 'Id of the won impression (impid)', value: (v) => v.impId },
  AUCTION_AD_ID: { description: 'Id of the ad markup to serve (adid)', value: (v) => v.adId ?? '' },
  AUCTION_PRICE: {
    description: 'Settlement price, CPM in USD (the only bid currency)',
    value: (v) => microsToCpm(v.priceMicros),
  },
} as const satisfies Record<string, MacroDefinition>;

export type AuctionMacro = keyof typeof AUCTION_MACROS;

/** Case-sensitive, as OpenRTB's macros are: `${auction_price}` is not a macro. */
export const MACRO_PATTERN = new RegExp(`\\$\\{(${Object.keys(AUCTION_MACROS).join('|')})\\}`, 'g');

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
 * Substitutes the bidding part 6 macros (docs/specification-notes.md#bidding-part-6) wherever they occur
 * ("without regard to syntax"), in one pass: a value that itself reads `${AUCTION_PRICE}` stays as it is (and
 * is encoded anyway).
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
