import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { SyncFault } from './dsp-simulator.settings';

export const SYNC_PATH = '/sync';
export const DSP_UID_COOKIE = 'dsp_uid';
/** A year: the user id outlives many syncs; Chromium caps cookies at 400 days anyway. */
export const DSP_UID_MAX_AGE_SECONDS = 365 * 24 * 3600;
/** The bidder_uuid of the `script_uuid` sync fault. */
export const SCRIPT_UUID = '"><script>alert(document.cookie)</script>';
/** The length of the bidder_uuid of the `huge_uuid` sync fault. */
export const HUGE_UUID_LENGTH = 10 * 1024;
/** Where the `open_redirect` sync fault sends the browser instead of the exchange's callback. */
export const FOREIGN_SYNC_URL = 'https://foreign-sync.example/match';

/** `<random>.<tag>`: 16 base64url characters, a dot, and 16 of a keyed hash of the first part. */
const UID_PATTERN = /^[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{16}$/;

/**
 * Issues the simulator's user ids and recognises them without storing any: each carries a keyed
 * hash of its random part, the key being this simulator's alone. An id from elsewhere, another
 * simulator sharing the browser's cookies of a host included, is not one of its own.
 */
export class UidIssuer {
  private readonly key = randomBytes(32);

  issue(): string {
    const id = randomBytes(12).toString('base64url');
    return `${id}.${this.tag(id)}`;
  }

  issued(uid: unknown): uid is string {
    if (typeof uid !== 'string' || !UID_PATTERN.test(uid)) {
      return false;
    }
    const dot = uid.indexOf('.');
    return this.tag(uid.slice(0, dot)) === uid.slice(dot + 1);
  }

  private tag(id: string): string {
    return createHmac('sha256', this.key).update(id).digest('base64url').slice(0, 16);
  }
}

/**
 * The query of a sync request (bidding spec 4.3, docs/specification-notes.md#bidding-part-4-3), validated; a
 * reason when it is unusable.
 */
export type SyncQuery =
  | {
      readonly ok: true;
      readonly exchangeUuid: string;
      readonly bidderId: string;
      readonly callbackUrl: string;
      readonly callback: URL;
    }
  | {
      readonly ok: false;
      readonly exchangeUuid: string;
      readonly bidderId: string;
      readonly callbackUrl: string;
      readonly reason: string;
    };

export function readSyncQuery(query: string): SyncQuery {
  const params = new URLSearchParams(query);
  const exchangeUuid = params.get('exchange_uuid') ?? '';
  const bidderId = params.get('bidder_id') ?? '';
  const callbackUrl = params.get('callback_url') ?? '';
  const refused = (reason: string): SyncQuery => ({ ok: false, exchangeUuid, bidderId, callbackUrl, reason });
  if (exchangeUuid === '') {
    return refused('exchange_uuid is required');
  }
  if (bidderId === '') {
    return refused('bidder_id is required');
  }
  const callback = URL.canParse(callbackUrl) ? new URL(callbackUrl) : undefined;
  if (!callback || (callback.protocol !== 'http:' && callback.protocol !== 'https:')) {
    return refused('callback_url must be an http(s) URL');
  }
  return { ok: true, exchangeUuid, bidderId, callbackUrl, callback };
}

/** The value of a cookie in a Cookie header, the first when repeated. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) {
      return pair.slice(eq + 1).trim();
    }
  }
  return undefined;
}

/** Over https the cookie follows the exchange's sync pixel across sites; over http Chromium keeps only Lax. */
export function uidCookie(uid: string, secure: boolean): string {
  const attributes = secure ? 'SameSite=None; Secure' : 'SameSite=Lax';
  return `${DSP_UID_COOKIE}=${uid}; Path=/; Max-Age=${DSP_UID_MAX_AGE_SECONDS}; HttpOnly; ${attributes}`;
}

/** Whether the browser reached the simulator over https: directly, or through a proxy saying so. */
export function cameOverHttps(req: IncomingMessage): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) {
    return true;
  }
  const forwarded = req.headers['x-forwarded-proto'];
  const proto = Array.isArray(forwarded) ? forwarded[0] : forwarded;
  return proto?.split(',')[0].trim().toLowerCase() === 'https';
}

/**
 * The callback URL with `bidder_id`, `bidder_uuid` and, when set, `expiration` added to its query (bidding
 * spec 4.4, docs/specification-notes.md#bidding-part-4-4); its own query and fragment kept. Built from the
 * parsed URL, so that the Location header carries no character a header cannot.
 */
export function callbackLocation(
  callback: URL,
  bidderId: string,
  bidderUuid: string,
  expiration: number | undefined,
): string {
  const url = new URL(callback.href);
  const { hash } = url;
  url.hash = '';
  let added = `bidder_id=${encodeURIComponent(bidderId)}&bidder_uuid=${encodeURIComponent(bidderUuid)}`;
  if (expiration !== undefined) {
    added += `&expiration=${expiration}`;
  }
  // An empty query (`/s/1?`) keeps its question mark in href but not in search.
  if (url.search === '') {
    return `${url.href.replace(/\?$/, '')}?${added}${hash}`;
  }
  return `${url.href}&${added}${hash}`;
}

/** The bidder_uuid a sync fault sends instead of the user's id, if it changes it. */
export function faultyBidderUuid(fault: SyncFault | undefined, uid: string): string | undefined {
  if (fault === 'script_uuid') {
    return SCRIPT_UUID;
  }
  if (fault === 'huge_uuid') {
    return `${uid}-`.repeat(Math.ceil(HUGE_UUID_LENGTH / (uid.length + 1))).slice(0, HUGE_UUID_LENGTH);
  }
  return undefined;
}

/** The foreign page of `open_redirect`, which would take the user's id and the exchange's callback along. */
export function foreignLocation(uid: string, callback: URL): string {
  return `${FOREIGN_SYNC_URL}?uid=${encodeURIComponent(uid)}&next=${encodeURIComponent(callback.href)}`;
}
