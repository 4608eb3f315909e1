import { createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { Inject, Injectable } from '@nestjs/common';
import { EMPTY_GEO, clientAddress, resolveDevice, type GeoResolver } from '@app/audience';
import { STATE_STORE, type StateStore } from '@app/state-store';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG, GEO_RESOLVER } from '../auction.tokens';
import type { TagParameters, Viewer } from '../core/ad-context';

export const USER_COOKIE = 'exchange_uuid';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const YEAR_SECONDS = 365 * 24 * 3600;
/**
 * How long the id minted for a recipient's first visit from one client is handed to that client's
 * other cookie-less requests: long enough to cover the images of one open still in flight, short
 * enough that it never joins two opens (docs/exchange.md#one-id-for-the-images-of-an-open).
 */
const FIRST_VISIT_WINDOW_MS = 10_000;

export interface ResolvedViewer {
  readonly viewer: Viewer;
  /** Our cookie to set on the answer, when the request had none (or a malformed one). */
  readonly setCookie?: string;
  /** The user keys a conversion can be attributed through: the recipient's and the cookie's. */
  readonly userKeys: readonly string[];
  /** Our user id from a valid cookie the request carried (never a freshly minted one). */
  readonly knownCookie?: string;
  /** Our id for the tag's recipient hash, when there is one. */
  readonly recipientUserId?: string;
}

/**
 * Who is looking: address, geo and device from the request; our user id from the recipient hash
 * (a stable HMAC, so that a DSP never sees the publisher's hash and the same recipient always has
 * the same id) or else from our `exchange_uuid` cookie, minted when missing. The images of one
 * email open arrive at once without our cookie and the browser keeps the last cookie answered: so
 * that they all answer the same one, the id minted for a recipient on a client is reused by that
 * recipient's cookie-less requests from the same client for FIRST_VISIT_WINDOW_MS.
 */
@Injectable()
export class ViewerResolver {
  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(GEO_RESOLVER) private readonly geo: GeoResolver,
    @Inject(STATE_STORE) private readonly state: StateStore,
  ) {}

  async resolve(req: IncomingMessage, tag: Pick<TagParameters, 'recipient'>): Promise<ResolvedViewer> {
    const ip = clientAddress(
      req.socket.remoteAddress,
      header(req, 'x-forwarded-for'),
      this.config.TRUSTED_PROXY_HOPS,
    );
    const userAgent = (header(req, 'user-agent') ?? '').slice(0, 512);
    const cookie = cookieValue(header(req, 'cookie'), USER_COOKIE);
    const knownCookie = cookie !== undefined && UUID.test(cookie) ? cookie : undefined;
    const secure =
      (req.socket as TLSSocket).encrypted === true ||
      (this.config.TRUSTED_PROXY_HOPS > 0 && header(req, 'x-forwarded-proto') === 'https');
    const recipientId = tag.recipient ? this.userIdOf(tag.recipient) : undefined;
    const device = resolveDevice(userAgent);
    // A webmail proxy keeps no cookie: there is no id to agree on.
    const cookieId =
      knownCookie ??
      (recipientId && device.device_type !== 'WebmailProxy'
        ? await this.firstVisitId(recipientId, ip, userAgent)
        : randomUUID());
    const userId = recipientId ?? cookieId;
    const userKeys = [...(recipientId ? [`r:${recipientId}`] : []), `c:${cookieId}`];
    return {
      viewer: {
        ip,
        userAgent,
        language: languageOf(header(req, 'accept-language')),
        secure,
        userId,
        userKey: userKeys[0],
        unrecognised: !recipientId && !knownCookie,
        // A webmail proxy's address is the mail provider's data centre, not the reader's place.
        geo: device.device_type === 'WebmailProxy' ? EMPTY_GEO : this.geo.lookup(ip),
        device,
      },
      setCookie: knownCookie ? undefined : userCookie(cookieId, secure),
      userKeys,
      knownCookie,
      recipientUserId: recipientId,
    };
  }

  /**
   * The id to mint for a cookie-less request of the recipient from this client (address and user
   * agent): the one minted for them within the window, else a new one. The key is a keyed hash, so
   * the store never holds an address; it lives for the window only.
   */
  private async firstVisitId(recipientId: string, ip: string, userAgent: string): Promise<string> {
    const client = createHmac('sha256', this.config.USER_ID_SECRET)
      .update(`first-visit\n${recipientId}\n${ip}\n${userAgent}`)
      .digest('base64url');
    const key = `first-visit:${client}`;
    const minted = randomUUID();
    if (await this.state.setIfAbsent(key, minted, FIRST_VISIT_WINDOW_MS)) {
      return minted;
    }
    // Gone between the two calls (the window just ended): the new id is as good.
    return (await this.state.get(key)) ?? minted;
  }

  /** A UUID-shaped HMAC of the recipient hash. */
  userIdOf(recipient: string): string {
    const hex = createHmac('sha256', this.config.USER_ID_SECRET).update(recipient).digest('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  }
}

/**
 * Our cookie, a year long. Browsers keep a `SameSite=None` cookie only when it is `Secure`, which
 * needs HTTPS; over plain HTTP (local runs) it is `Lax`, kept on the top-level click.
 */
export function userCookie(id: string, secure: boolean): string {
  const site = secure ? 'SameSite=None; Secure' : 'SameSite=Lax';
  return `${USER_COOKIE}=${id}; Max-Age=${YEAR_SECONDS}; Path=/; HttpOnly; ${site}`;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** One cookie's value from a Cookie header; a malformed header yields nothing. */
export function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader || cookieHeader.length > 8192) {
    return undefined;
  }
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) {
      return part.slice(at + 1).trim();
    }
  }
  return undefined;
}

function languageOf(acceptLanguage: string | undefined): string {
  const first = acceptLanguage?.split(',')[0]?.split(';')[0]?.trim() ?? '';
  return /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/.test(first) ? first : '';
}
