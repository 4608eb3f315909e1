export const CATALOG = Symbol('CATALOG');
export const REPORTING_CONFIG = Symbol('REPORTING_CONFIG');
export const CLOCK = Symbol('CLOCK');

/** The time source, injectable so that tests can pin "today". */
export type Clock = () => Date;
