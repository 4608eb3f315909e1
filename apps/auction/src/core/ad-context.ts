import type { AdSlotRecord, PublisherRecord, TemplateRecord } from '@app/catalog';
import type { PrivacySignals, TcfConsent } from '@app/openrtb';

/** What the publisher's ad tag says about the open (the query of `/img` and `/click`). */
export interface TagParameters {
  readonly placementId: string;
  readonly listId: string;
  /** The publisher's hash of the recipient's address; never sent to a DSP as it is. */
  readonly recipient: string;
  readonly emailDomain: string;
  readonly keyValues: readonly (readonly [string, string])[];
  readonly age: string;
  readonly gender: string;
  /** The publisher's consent flag: false (`consent=0`) turns user matching off for this request. */
  readonly consent: boolean;
  /** The tag's privacy signals (`gdpr`, `gdpr_consent`, `us_privacy`, `gpp`, `gpp_sid`). */
  readonly privacy: Omit<PrivacySignals, 'coppa'>;
}

/** Who is looking, as far as the request tells. */
export interface Viewer {
  readonly ip: string;
  readonly userAgent: string;
  readonly language: string;
  readonly secure: boolean;
  /** Our user id: derived from the recipient hash when the tag has one, else our cookie. */
  readonly userId: string;
  /** What a decision and a conversion are keyed by (`r:`, `c:` or `a:` for anonymous). */
  readonly userKey: string;
  /**
   * Neither a recipient hash nor a cookie of ours came with the request: the key is new, so the
   * other slots of the same email (requested at once, before any cookie is set) have keys of their own.
   */
  readonly unrecognised?: boolean;
  readonly geo: { country: string; region: string; metro: string; zip: string };
  /** Each DSP's id for this user (`user.buyeruid`), from user sync. */
  readonly buyerUids?: ReadonlyMap<string, string>;
  readonly device: {
    device_maker: string;
    device_model: string;
    device_type: string;
    os: string;
    browser: string;
  };
}

/** One ad request to decide: the slot with its lineage, the tag and the viewer. */
export interface AdContext {
  readonly auctionId: string;
  readonly now: Date;
  readonly slot: AdSlotRecord;
  readonly template: TemplateRecord;
  readonly publisher: PublisherRecord;
  readonly tag: TagParameters;
  readonly viewer: Viewer;
  /** The tag's privacy signals over the publisher's defaults (core/privacy-context.ts). */
  readonly privacy: PrivacySignals;
  /** The TCF consent, decoded once, where GDPR applies and the string decodes. */
  readonly consent?: TcfConsent;
  /**
   * When the request was read (`performance.now()`): its auction ends within `tmax` of it. (How
   * long it waited in the kernel before is not known here; the limit on auctions in flight keeps
   * the loop's lag, which bounds it, low.)
   */
  readonly arrivedAt?: number;
}
