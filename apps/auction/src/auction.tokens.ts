export const AUCTION_CONFIG = Symbol('AUCTION_CONFIG');
export const CATALOG = Symbol('CATALOG');
export const CLOCK = Symbol('CLOCK');
export const GEO_RESOLVER = Symbol('GEO_RESOLVER');
/** The one guard of the URLs DSPs give us (`DspUrlGuard`). */
export const DSP_URL_GUARD = Symbol('DSP_URL_GUARD');

/** The time source, injectable so that tests can send traffic on a day of their choosing. */
export type Clock = () => Date;
