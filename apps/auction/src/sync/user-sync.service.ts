import { Inject, Injectable } from '@nestjs/common';
import type { Catalog, CatalogSource, DspRecord } from '@app/catalog';
import type { PrivacySignals, TcfConsent } from '@app/openrtb';
import { AuctionErrorCode, AuctionException } from '../auction.exception';
import { CATALOG, CLOCK, type Clock } from '../auction.tokens';
import { mayIdentifyFor } from '../core/privacy-context';
import { PublicOrigin } from '../public-origin.service';
import { isLive, UserSyncStore } from './user-sync.store';

/** What a DSP may call us back with: printable ASCII without markup, quotes or spaces. */
const BIDDER_UUID = /^[A-Za-z0-9._~:@!$*+,;=/-]{1,128}$/;
/** Two years: an expiration further out is a mistake or an attempt to keep a match forever. */
const MAX_EXPIRATION_S = 2 * 365 * 24 * 3600;

/** Why a sync callback was refused; nothing is stored for it. */
export enum SyncRejection {
  UnknownDsp = 'unknown_dsp',
  WrongBidderId = 'wrong_bidder_id',
  NoCookie = 'no_cookie',
  InvalidBidderUuid = 'invalid_bidder_uuid',
  InvalidExpiration = 'invalid_expiration',
}

export type SyncCallbackResult =
  { readonly stored: 'match' | 'no_match' } | { readonly refused: SyncRejection };

/** Who the sync sees: our cookie's user, when the browser sent it, and the recipient, when given. */
export interface SyncUser {
  /** Our user id from a valid `exchange_uuid` cookie the browser sent, never a freshly minted one. */
  readonly exchangeUuid?: string;
  /** Our id for the tag's recipient hash. */
  readonly recipientUserId?: string;
  /** The publisher's consent flag; false turns matching off. */
  readonly consent: boolean;
  /**
   * The request's privacy signals and TCF consent: where GDPR applies, a DSP whose vendor has no
   * purpose 1 consent is neither synced nor given its id for the user. None: no restriction.
   */
  readonly privacy?: { readonly privacy: PrivacySignals; readonly consent?: TcfConsent };
}

/**
 * User sync (parts 4.3 and 4.4): the `/sync` pixel sends a cookie-bearing browser to the next DSP
 * it is not matched with, the DSP's callback stores the match, and bid requests carry each DSP's
 * `buyeruid`. A recipient seen together with our cookie is bound to that user, so that webmail
 * readers (image proxies send no cookies) are recognised through the recipient hash.
 */
@Injectable()
export class UserSyncService {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly store: UserSyncStore,
    private readonly origin: PublicOrigin,
  ) {}

  /** The URL of the next DSP to sync the user with, or undefined when there is none to ask. */
  async nextSyncUrl(user: SyncUser): Promise<string | undefined> {
    if (!user.consent || !user.exchangeUuid) {
      return undefined;
    }
    await this.bind(user);
    const nowS = this.clock().getTime() / 1000;
    for (const dsp of this.catalog.document.dsps) {
      if (!dsp.syncUrl || dsp.paused || !this.mayIdentify(user, dsp)) {
        continue;
      }
      const match = await this.store.match(dsp.id, user.exchangeUuid);
      if (match && isLive(match, nowS)) {
        continue;
      }
      if (!(await this.store.startSync(dsp.id, user.exchangeUuid))) {
        continue;
      }
      return this.syncUrlOf(dsp, user.exchangeUuid, user.privacy?.privacy);
    }
    return undefined;
  }

  async callback(
    dspAdvertiserId: string,
    query: Readonly<Record<string, unknown>>,
    exchangeUuid: string | undefined,
  ): Promise<SyncCallbackResult> {
    const dsp = this.catalog.dspsBySyncId.get(dspAdvertiserId);
    if (!dsp) {
      throw new AuctionException(AuctionErrorCode.UnknownDsp, 'no DSP with that advertiser id');
    }
    if (query.bidder_id !== dsp.id) {
      return { refused: SyncRejection.WrongBidderId };
    }
    if (!exchangeUuid) {
      return { refused: SyncRejection.NoCookie };
    }
    const uuid = query.bidder_uuid ?? '';
    if (typeof uuid !== 'string' || (uuid !== '' && !BIDDER_UUID.test(uuid))) {
      return { refused: SyncRejection.InvalidBidderUuid };
    }
    const nowMs = this.clock().getTime();
    const expiration = query.expiration ?? '';
    let expiresAt: number | undefined;
    if (expiration !== '') {
      if (typeof expiration !== 'string' || !/^\d{1,12}$/.test(expiration)) {
        return { refused: SyncRejection.InvalidExpiration };
      }
      expiresAt = Number(expiration);
      if (expiresAt * 1000 <= nowMs || expiresAt - nowMs / 1000 > MAX_EXPIRATION_S) {
        return { refused: SyncRejection.InvalidExpiration };
      }
    }
    await this.store.keep(dsp.id, exchangeUuid, { buyerUid: uuid, expiresAt }, nowMs);
    return { stored: uuid === '' ? 'no_match' : 'match' };
  }

  /**
   * Each DSP's id for the user of an ad request: through our cookie, or through the user the
   * recipient was bound to. Binds the recipient when both are seen. Nothing without consent.
   */
  async buyerUids(user: SyncUser): Promise<Map<string, string>> {
    const uids = new Map<string, string>();
    if (!user.consent) {
      return uids;
    }
    await this.bind(user);
    const exchangeUuid =
      user.exchangeUuid ??
      (user.recipientUserId ? await this.store.boundUser(user.recipientUserId) : undefined);
    if (!exchangeUuid) {
      return uids;
    }
    const nowS = this.clock().getTime() / 1000;
    for (const dsp of this.catalog.document.dsps) {
      if (!this.mayIdentify(user, dsp)) {
        continue;
      }
      const match = await this.store.match(dsp.id, exchangeUuid);
      if (match?.buyerUid && isLive(match, nowS)) {
        uids.set(dsp.id, match.buyerUid);
      }
    }
    return uids;
  }

  /** Binds the recipient to our cookie's user when both are seen together, with consent. */
  async bind(user: SyncUser): Promise<void> {
    if (user.consent && user.exchangeUuid && user.recipientUserId) {
      await this.store.bindRecipient(user.recipientUserId, user.exchangeUuid);
    }
  }

  private mayIdentify(user: SyncUser, dsp: DspRecord): boolean {
    return user.privacy === undefined || mayIdentifyFor(user.privacy, dsp);
  }

  /**
   * The DSP's sync URL for the user, with the request's privacy signals under the names the ad tag
   * takes them, so that the DSP can apply them to its own cookie; its callback URL carries them too,
   * so that the chain goes on under the same signals.
   */
  private syncUrlOf(dsp: DspRecord, exchangeUuid: string, privacy: PrivacySignals | undefined): string {
    const url = new URL(dsp.syncUrl!);
    const signals = privacyQuery(privacy);
    const callback = `${this.origin.value}/s/${encodeURIComponent(dsp.dspAdvertiserId ?? dsp.id)}`;
    url.searchParams.set('exchange_uuid', exchangeUuid);
    url.searchParams.set('bidder_id', dsp.id);
    url.searchParams.set('callback_url', signals ? `${callback}?${signals}` : callback);
    for (const [name, value] of new URLSearchParams(signals)) {
      url.searchParams.set(name, value);
    }
    return url.toString();
  }
}

/**
 * Privacy signals as the query of the ad tag and the sync pixel write them (`gdpr`, `gdpr_consent`,
 * `us_privacy`, `gpp`, `gpp_sid`); '' for none.
 */
export function privacyQuery(privacy: Omit<PrivacySignals, 'coppa'> | undefined): string {
  const query = new URLSearchParams();
  const signals: [string, string | undefined][] = [
    ['gdpr', privacy?.gdpr === undefined ? undefined : String(privacy.gdpr)],
    ['gdpr_consent', privacy?.gdprConsent],
    ['us_privacy', privacy?.usPrivacy],
    ['gpp', privacy?.gpp],
    ['gpp_sid', privacy?.gppSid?.join(',')],
  ];
  for (const [name, value] of signals) {
    if (value !== undefined) {
      query.set(name, value);
    }
  }
  return query.toString();
}
