export const AUCTION_CONFIG = Symbol('AUCTION_CONFIG');
/** The catalog serving now, as a `CatalogSource`: read `current` per request (it reloads). */
export const CATALOG = Symbol('CATALOG');
/** Where booked deliveries are counted (`DeliveryCounters`): memory or Redis. */
export const DELIVERY_COUNTERS_TOKEN = Symbol('DELIVERY_COUNTERS');
export const CLOCK = Symbol('CLOCK');
export const GEO_RESOLVER = Symbol('GEO_RESOLVER');
/** The one guard of the URLs DSPs give us (`DspUrlGuard`). */
export const DSP_URL_GUARD = Symbol('DSP_URL_GUARD');

/** The time source, injectable so that tests can send traffic on a day of their choosing. */
export type Clock = () => Date;
