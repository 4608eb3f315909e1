export const AUCTION_CONFIG = Symbol('AUCTION_CONFIG');
export const CATALOG = Symbol('CATALOG');
export const CLOCK = Symbol('CLOCK');
export const GEO_RESOLVER = Symbol('GEO_RESOLVER');

/** The time source, injectable so that tests can send traffic on a day of their choosing. */
export type Clock = () => Date;
