// @ts-check
/*
 * The catalogue of /builder/catalog.json (splits, metrics, attributes, result codes, date ranges),
 * as the signed-in user may use it: the API variant narrows the splits and the metrics, and the
 * account may be denied a report type. Names become labels here too.
 */

/** @typedef {import('../builder-catalog').BuilderCatalog} BuilderCatalog */
/** @typedef {import('../builder-catalog').BuilderSplit} BuilderSplit */
/** @typedef {import('../builder-catalog').BuilderMetric} BuilderMetric */
/** @typedef {import('../builder-catalog').BuilderAttribute} BuilderAttribute */
/** @typedef {import('../builder-catalog').BuilderResultCode} BuilderResultCode */
/** @typedef {BuilderCatalog['variants'][number]} ApiVariant */
/** @typedef {BuilderCatalog['types'][number]} ReportType */
/** @typedef {{ allowed: true } | { allowed: false; code: number }} TypeAccess */
/**
 * What sign-in found out: the report types the account may use and the user's API variant.
 *
 * @typedef {{ variant: ApiVariant; types: Record<string, TypeAccess> }} Access
 */
/** @typedef {string | number | null} Value */

/** Split sort kinds whose values follow time: charted as a line, in time order. */
export const TIME_SORT_KINDS = ['date', 'time'];

/** @type {Readonly<Record<string, string>>} */
const ACRONYMS = {
  id: 'ID',
  ctr: 'CTR',
  ccr: 'CCR',
  cpm: 'CPM',
  cpc: 'CPC',
  cpa: 'CPA',
  os: 'OS',
  io: 'IO',
};

/** @type {BuilderCatalog | null} */
let loaded = null;
/** @type {Access | null} */
let access = null;

/** @param {BuilderCatalog} catalogue */
export function useCatalog(catalogue) {
  loaded = catalogue;
}

/**
 * The catalogue; the page reads it before it draws anything.
 *
 * @returns {BuilderCatalog}
 */
export function catalog() {
  if (!loaded) {
    throw new Error('the catalogue is not loaded yet');
  }
  return loaded;
}

/** @param {Access | null} granted what sign-in found, null once signed out */
export function useAccess(granted) {
  access = granted;
}

/** @returns {ApiVariant} */
export function variant() {
  return access ? access.variant : 'full';
}

/**
 * @param {string} type
 * @returns {TypeAccess | undefined} undefined before sign-in
 */
export function typeAccess(type) {
  return access ? access.types[type] : undefined;
}

/**
 * @param {number} code
 * @returns {BuilderResultCode | null}
 */
export function codeEntry(code) {
  return catalog().resultCodes.find((c) => c.code === code) ?? null;
}

/**
 * The number of a result code by its name (`ReportCode` member), NaN when the catalogue lacks it.
 *
 * @param {string} name
 * @returns {number}
 */
export function codeNumber(name) {
  const entry = catalog().resultCodes.find((c) => c.name === name);
  return entry ? entry.code : NaN;
}

/**
 * The catalogue's message without its category ("Permission denied: ...").
 *
 * @param {number} code
 * @returns {string}
 */
export function reason(code) {
  const entry = codeEntry(code);
  if (!entry) {
    return 'unexpected answer from the service';
  }
  const cut = entry.message.indexOf(': ');
  return cut >= 0 ? entry.message.slice(cut + 2) : entry.message;
}

/**
 * An advice with the `Retry-After` wait in it.
 *
 * @param {string} text
 * @param {number} seconds
 * @returns {string}
 */
export function fillWait(text, seconds) {
  return text.replace('{wait}', `${seconds} second${seconds === 1 ? '' : 's'}`);
}

/**
 * @param {string} name
 * @returns {BuilderSplit | null}
 */
export const findSplit = (name) => catalog().splits.find((s) => s.name === name) ?? null;
/**
 * @param {string} name
 * @returns {BuilderMetric | null}
 */
export const findMetric = (name) => catalog().metrics.find((m) => m.name === name) ?? null;
/**
 * @param {string} name
 * @returns {BuilderAttribute | null}
 */
export const findAttribute = (name) => catalog().attributes.find((a) => a.name === name) ?? null;

/**
 * @param {BuilderSplit} split
 * @param {string} type
 * @returns {boolean}
 */
export function splitAllowed(split, type) {
  return variant() === 'advertiser_only'
    ? split.variantExactness !== null
    : split.types.some((t) => t === type);
}

/**
 * @param {BuilderSplit} split
 * @returns {BuilderSplit['exactness']}
 */
export function splitExactness(split) {
  return variant() === 'advertiser_only' ? (split.variantExactness ?? split.exactness) : split.exactness;
}

/**
 * @param {BuilderMetric} metric
 * @param {string} type
 * @returns {boolean}
 */
export function metricAllowed(metric, type) {
  return variant() === 'advertiser_only' ? metric.inVariant : metric.types.some((t) => t === type);
}

/**
 * A name as a heading: "Campaign ID", "Day hour".
 *
 * @param {string} name
 * @returns {string}
 */
export function label(name) {
  return name
    .split('_')
    .map((word, i) => ACRONYMS[word] ?? (i === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word))
    .join(' ');
}

/**
 * A name inside a sentence: "campaign ID", "day hour".
 *
 * @param {string} name
 * @returns {string}
 */
export function phrase(name) {
  return name
    .split('_')
    .map((word) => ACRONYMS[word] ?? word)
    .join(' ');
}

/**
 * Whether a column of a report holds numbers: every metric, and the split when its values are.
 *
 * @param {string} name
 * @param {string} split
 * @returns {boolean}
 */
export function isNumericField(name, split) {
  if (findMetric(name)) {
    return true;
  }
  const s = name === split ? findSplit(name) : null;
  return Boolean(s && s.valueKind === 'integer');
}

const integerFormat = new Intl.NumberFormat('en-US');
const decimalFormat = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

/**
 * @param {string} field
 * @param {Value | undefined} value
 * @returns {string}
 */
export function formatValue(field, value) {
  if (value === null || value === undefined) {
    return '—';
  }
  const metric = findMetric(field);
  if (metric && typeof value === 'number') {
    return metric.dataType === 'decimal' ? decimalFormat.format(value) : integerFormat.format(value);
  }
  return String(value);
}

/**
 * A day with its weekday: "Mon 2026-11-16".
 *
 * @param {string} day
 * @returns {string}
 */
export function formatDay(day) {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) {
    return day;
  }
  const weekday = date.toLocaleDateString('en-GB', { weekday: 'short', timeZone: 'UTC' });
  return `${weekday} ${day}`;
}

/**
 * The order of two values of a column: numbers as numbers, text with its digits as numbers,
 * missing values last.
 *
 * @param {Value | undefined} a
 * @param {Value | undefined} b
 * @returns {number}
 */
export function compareValues(a, b) {
  const nullA = a === null || a === undefined;
  const nullB = b === null || b === undefined;
  if (nullA || nullB) {
    return nullA === nullB ? 0 : nullA ? 1 : -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  return String(a).localeCompare(String(b), 'en', { numeric: true });
}
