// @ts-check
/*
 * The service: the catalogue with its clock, the meaning of a date expression, and signed
 * `POST /api` requests.
 *
 * The page signs every request itself, as part 5 of the reporting specification says a client does
 * (docs/specification-notes.md#reporting-part-5): hash = SHA-1(token + seed), with a fresh seed per
 * request, seed = max(last seed + 1, now), "now" being the service's clock (read from the
 * catalogue, then kept with the page's monotonic clock), and at most one request a second. The
 * token lives in one variable of this module: it is never sent, never written to storage, the URL
 * or the DOM, and is gone when the page is.
 */
import { catalog, codeNumber, useCatalog } from './catalogue.js';
import { sha1Hex } from './signing.js';
import { storageGet, storageSet } from './storage.js';

export const JSON_TYPE = 'application/json';

/**
 * A refused request as the page explains it.
 *
 * @typedef {{
 *   code: number;
 *   detail: string;
 *   status: number;
 *   retryAfter: number;
 *   requestId: string | null;
 * }} ApiError
 */

/**
 * What `/builder/date` answers.
 *
 * @typedef {{ expression: string; date: string | null; today: string; beforeToday: boolean }} DateAnswer
 */

/** @typedef {(seconds: number) => void} RateLimitListener */

/**
 * The service's clock: its UNIX seconds at a point of the page's monotonic clock.
 *
 * @type {{ seconds: number; at: number } | null}
 */
let clock = null;
/** @type {string | null} The user id whose token is in `secret`. */
let signer = null;
/** @type {string | null} The token. Only here. */
let secret = null;
/** @type {Promise<unknown>} */
let queue = Promise.resolve();
let lastSentAt = -Infinity;
let blockedUntil = 0;
/** @type {Map<string, number>} */
const lastSeeds = new Map();
/** @type {RateLimitListener} */
let rateLimited = () => undefined;

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The user whose requests are signed from now on, and its token.
 *
 * @param {string} id
 * @param {string} token
 */
export function useCredentials(id, token) {
  signer = id;
  secret = token;
}

export function forgetCredentials() {
  signer = null;
  secret = null;
}

/**
 * Called when the service answers 51 (too many requests) with its `Retry-After` seconds; the
 * requests of this page wait that long anyway.
 *
 * @param {RateLimitListener} listener
 */
export function onRateLimited(listener) {
  rateLimited = listener;
}

/** Reads the catalogue, and with it the service's clock. */
export async function syncClock() {
  const before = performance.now();
  const response = await fetch('/builder/catalog.json', { cache: 'no-store', credentials: 'omit' });
  const after = performance.now();
  if (!response.ok) {
    throw new Error(`catalogue: HTTP ${response.status}`);
  }
  const catalogue = /** @type {import('./catalogue.js').BuilderCatalog} */ (await readJson(response));
  useCatalog(catalogue);
  clock = { seconds: catalogue.now, at: (before + after) / 2 };
}

/** @returns {number} */
function serverNow() {
  if (!clock) {
    throw new Error('the clock is not synchronised yet');
  }
  return clock.seconds + (performance.now() - clock.at) / 1000;
}

/**
 * Seeds grow per user, across reloads and tabs of this browser: max(last + 1, now).
 *
 * @param {string} id
 * @returns {number}
 */
function nextSeed(id) {
  const stored = Number(storageGet(`seed:${id}`)) || 0;
  const last = Math.max(lastSeeds.get(id) ?? 0, stored);
  const seed = Math.max(last + 1, Math.floor(serverNow()));
  lastSeeds.set(id, seed);
  storageSet(`seed:${id}`, String(seed));
  return seed;
}

/** @returns {number} */
function requestGapMs() {
  const perSecond = Math.max(1, Number(catalog().requestsPerSecond) || 1);
  return Math.ceil(1000 / perSecond) + (perSecond === 1 ? 150 : 5);
}

/**
 * @param {Response} response
 * @returns {number}
 */
function retryAfterOf(response) {
  const value = Number(response.headers.get('Retry-After'));
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : 1;
}

/**
 * Sends one signed request. Requests go one after the other, at most one a second per user
 * (counted across this browser's tabs and reloads), so that seeds grow in the order sent.
 *
 * @param {Record<string, unknown>} body the query, without id, seed and hash
 * @param {string} accept
 * @param {string} [path] `/api` (reports) or `/api/delivery` (the Delivery view)
 * @returns {Promise<Response>}
 */
export function send(body, accept, path = '/api') {
  const job = queue.then(() => transmit(body, accept, false, path));
  queue = job.then(
    () => undefined,
    () => undefined,
  );
  return job;
}

/**
 * @param {Record<string, unknown>} body
 * @param {string} accept
 * @param {boolean} retried
 * @param {string} path
 * @returns {Promise<Response>}
 */
async function transmit(body, accept, retried, path) {
  if (!signer || secret === null) {
    throw new Error('not signed in');
  }
  const id = signer;
  // This page's last request, and the last one of this user in any tab of this browser.
  const sentElsewhere = Number(storageGet(`sent:${id}`)) || 0;
  const wait = Math.max(
    lastSentAt + requestGapMs() - performance.now(),
    sentElsewhere + requestGapMs() - Date.now(),
    blockedUntil - performance.now(),
  );
  if (wait > 0) {
    await sleep(Math.min(wait, 5000));
  }
  const seed = nextSeed(id);
  const hash = await sha1Hex(secret + String(seed));
  lastSentAt = performance.now();
  storageSet(`sent:${id}`, String(Date.now()));
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': JSON_TYPE, Accept: accept },
    body: JSON.stringify({ id, seed, hash, ...body }),
    cache: 'no-store',
    credentials: 'omit',
  });
  const code = Number(response.headers.get('X-Report-Code'));
  if (code === codeNumber('SeedOutOfWindow') && !retried) {
    await syncClock();
    return transmit(body, accept, true, path);
  }
  if (code === codeNumber('QueryLimitExceeded')) {
    const seconds = retryAfterOf(response);
    blockedUntil = performance.now() + seconds * 1000;
    rateLimited(seconds);
  }
  return response;
}

/**
 * The result code of a refused request, from its body when it has one (JSON), else its header.
 *
 * @param {Response} response
 * @returns {Promise<ApiError>}
 */
export async function readError(response) {
  let code = Number(response.headers.get('X-Report-Code')) || 0;
  let detail = '';
  try {
    const body = /** @type {{ error?: { code?: unknown; message?: unknown } } | null} */ (
      await readJson(response.clone())
    );
    if (body && body.error) {
      code = Number(body.error.code) || code;
      detail = typeof body.error.message === 'string' ? body.error.message : '';
    }
  } catch {
    /* an HTML or XML error page: the header has the code */
  }
  return {
    code,
    detail,
    status: response.status,
    retryAfter: retryAfterOf(response),
    requestId: response.headers.get('X-Request-Id'),
  };
}

/**
 * What a date expression means today on the service's clock (unsigned: it reveals nothing).
 *
 * @param {string} expression
 * @returns {Promise<DateAnswer>}
 */
export async function resolveDateExpression(expression) {
  const response = await fetch(`/builder/date?expression=${encodeURIComponent(expression)}`, {
    cache: 'no-store',
  });
  return /** @type {DateAnswer} */ (await readJson(response));
}

/**
 * A response's JSON body, of no known shape until the caller says what it expects.
 *
 * @param {Response} response
 * @returns {Promise<unknown>}
 */
export async function readJson(response) {
  /** @type {unknown} */
  const body = await response.json();
  return body;
}
