/** The catalog serving now, as a `CatalogSource` (it reloads). */
export const CATALOG = Symbol('CATALOG');
/** Where the auction counts booked deliveries (`DeliveryCounters`), read by `POST /api/delivery`. */
export const DELIVERY_COUNTERS = Symbol('DELIVERY_COUNTERS');
export const REPORTING_CONFIG = Symbol('REPORTING_CONFIG');
export const CLOCK = Symbol('CLOCK');

/** The time source, injectable so that tests can pin "today". */
export type Clock = () => Date;
