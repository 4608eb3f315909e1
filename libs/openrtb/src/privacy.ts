import { isIP } from 'node:net';
import { RestrictionType, TCString, type TCModel } from '@iabtechlabtcf/core';
import type { BidRequest, Regs } from './openrtb.types';

/**
 * The privacy signals of one ad request (docs/dsp-integration.md#privacy): the ad tag's, or where
 * the tag says nothing, the publisher's defaults from the catalog. Every string here has passed
 * `readPrivacyParameters`' syntax checks; whether a TCF string decodes is only known later.
 */
export interface PrivacySignals {
  /** 1: GDPR applies; 0: it does not; undefined: unknown (not sent, nothing withheld for it). */
  readonly gdpr?: 0 | 1;
  /** The TCF v2 consent string (`gdpr_consent`), as received. */
  readonly gdprConsent?: string;
  /** The IAB US Privacy (CCPA) string, upper case: `1YNN`. */
  readonly usPrivacy?: string;
  /** The IAB Global Privacy Platform string. */
  readonly gpp?: string;
  /** The GPP section ids that apply to the request. */
  readonly gppSid?: readonly number[];
  /** The request falls under COPPA: the publisher's catalog entry says so. */
  readonly coppa?: boolean;
}

/** Bounds of the privacy parameters: past them a value is dropped as invalid. */
export const PRIVACY_LIMITS = {
  /**
   * A TCF v2 string with every consent of a large vendor list and its disclosed vendors is a
   * few hundred to 2,000 characters; twice that leaves room and still refuses an abuse.
   */
  consentLength: 4096,
  gppLength: 4096,
  gppSections: 32,
} as const;

/** TCF strings are base64url segments joined by dots. */
const TCF_STRING = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
/** Version 1, then notice given, opt-out of sale, LSPA covered: each Y, N or `-`. */
const US_PRIVACY = /^1[YN-]{3}$/i;
/** A GPP string: a header and sections, base64url, joined by `~` (sub-sections by `.`). */
const GPP_STRING = /^[A-Za-z0-9_.-]+(~[A-Za-z0-9_.-]*)*$/;
const GPP_SID = /^\d{1,5}(,\d{1,5})*$/;

export type PrivacyParameter = 'gdpr' | 'gdpr_consent' | 'us_privacy' | 'gpp' | 'gpp_sid';

/**
 * Reads the privacy parameters of an ad tag or a sync pixel. A value that is malformed or past its
 * limit is dropped and named in `problems` (`gdpr_consent:invalid`), never a failure.
 */
export function readPrivacyParameters(read: (name: PrivacyParameter) => string): {
  signals: Omit<PrivacySignals, 'coppa'>;
  problems: string[];
} {
  const problems: string[] = [];
  const valid = (name: PrivacyParameter, ok: (value: string) => boolean): string | undefined => {
    const value = read(name);
    if (value === '') {
      return undefined;
    }
    if (ok(value)) {
      return value;
    }
    problems.push(`${name}:invalid`);
    return undefined;
  };
  const gdpr = valid('gdpr', (v) => v === '0' || v === '1');
  const gdprConsent = valid(
    'gdpr_consent',
    (v) => v.length <= PRIVACY_LIMITS.consentLength && TCF_STRING.test(v),
  );
  const usPrivacy = valid('us_privacy', (v) => US_PRIVACY.test(v));
  const gpp = valid('gpp', (v) => v.length <= PRIVACY_LIMITS.gppLength && GPP_STRING.test(v));
  const gppSid = valid(
    'gpp_sid',
    (v) => GPP_SID.test(v) && v.split(',').length <= PRIVACY_LIMITS.gppSections,
  );
  return {
    signals: {
      gdpr: gdpr === undefined ? undefined : gdpr === '1' ? 1 : 0,
      gdprConsent,
      usPrivacy: usPrivacy?.toUpperCase(),
      gpp,
      gppSid: gppSid?.split(',').map(Number),
    },
    problems,
  };
}

/** The request's signals over the publisher's defaults, field by field; `coppa` is the publisher's. */
export function mergePrivacy(
  request: Omit<PrivacySignals, 'coppa'>,
  defaults: PrivacySignals | undefined,
): PrivacySignals {
  return {
    gdpr: request.gdpr ?? defaults?.gdpr,
    gdprConsent: request.gdprConsent ?? defaults?.gdprConsent,
    usPrivacy: request.usPrivacy ?? defaults?.usPrivacy,
    gpp: request.gpp ?? defaults?.gpp,
    gppSid: request.gppSid ?? defaults?.gppSid,
    coppa: defaults?.coppa === true ? true : undefined,
  };
}

/** The TCF purpose of "store and/or access information on a device": cookies, and so user ids. */
const STORAGE_PURPOSE = 1;

/**
 * The longest core segment decoded: decoding costs more than linear time in a string's length, and
 * garbage near the 4,096 characters of the parameter's limit costs many times a real string
 * (bench/journal/exchange.md, "TCF consent decoding"). A core segment holds the consents and the
 * publisher restrictions: a few hundred characters for a real string, some 1,100 for Prebid
 * Server's longest test string with restrictions.
 */
export const MAX_TCF_CORE_LENGTH = 2048;

/**
 * Bounds of what a core segment may make the library do. The reference decoder sets every vendor id
 * a range covers, one by one: a few hundred characters of crafted ranges (1 to 65,535, again and
 * again) cost it seconds of CPU (bench/journal/exchange.md, "TCF consent decoding"). The Global
 * Vendor List's ids are under 1,500; real strings cover a few thousand ids in all.
 */
export const TCF_LIMITS = { maxVendorId: 10_000, coveredVendorIds: 50_000 } as const;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Reads a base64url string bit by bit, most significant first, as TCF strings are written. */
class BitReader {
  private at = 0;
  private readonly bits: number;

  constructor(private readonly text: string) {
    this.bits = text.length * 6;
  }

  /** The next `count` bits as a number (at most 36, below 2^53), or undefined past the end. */
  read(count: number): number | undefined {
    if (this.at + count > this.bits) {
      return undefined;
    }
    let value = 0;
    for (let i = 0; i < count; i += 1, this.at += 1) {
      const sextet = BASE64URL.indexOf(this.text[Math.floor(this.at / 6)]);
      value = value * 2 + ((sextet >> (5 - (this.at % 6))) & 1);
    }
    return value;
  }

  skip(count: number): boolean {
    this.at += count;
    return this.at <= this.bits;
  }
}

/** The ids a vendor range section covers, or undefined when it is truncated or out of bounds. */
function rangeEntries(reader: BitReader, maxId: number): number | undefined {
  const entries = reader.read(12);
  if (entries === undefined) {
    return undefined;
  }
  let covered = 0;
  for (let i = 0; i < entries; i += 1) {
    const isRange = reader.read(1);
    const start = reader.read(16);
    const end = isRange === 1 ? reader.read(16) : start;
    if (start === undefined || end === undefined || start < 1 || end < start || end > maxId) {
      return undefined;
    }
    covered += end - start + 1;
  }
  return covered;
}

/** The ids a vendor section (consents or legitimate interests) covers, or undefined. */
function vendorSection(reader: BitReader): number | undefined {
  const maxVendorId = reader.read(16);
  const isRange = reader.read(1);
  if (maxVendorId === undefined || isRange === undefined || maxVendorId > TCF_LIMITS.maxVendorId) {
    return undefined;
  }
  if (isRange === 0) {
    return reader.skip(maxVendorId) ? maxVendorId : undefined;
  }
  return rangeEntries(reader, maxVendorId);
}

/**
 * Whether a TCF v2 core segment is well formed and within TCF_LIMITS, read in time linear in its
 * length, before the library decodes it: version 2, every section present, every vendor id under
 * the bound, every range ordered, and the ids all ranges cover within the bound. The fields' sizes
 * are those of the TCF v2 core string (version 6 bits, created and last updated 36 each, and so on
 * to the publisher restrictions).
 */
export function isBoundedTcfCore(core: string): boolean {
  const reader = new BitReader(core);
  if (reader.read(6) !== 2) {
    return false;
  }
  // Created, LastUpdated, CmpId, CmpVersion, ConsentScreen, ConsentLanguage, VendorListVersion,
  // TcfPolicyVersion, IsServiceSpecific, UseNonStandardTexts, SpecialFeatureOptIns,
  // PurposesConsent, PurposesLITransparency, PurposeOneTreatment, PublisherCC.
  if (!reader.skip(36 + 36 + 12 + 12 + 6 + 12 + 12 + 6 + 1 + 1 + 12 + 24 + 24 + 1 + 12)) {
    return false;
  }
  let covered = 0;
  for (const section of [vendorSection(reader), vendorSection(reader)]) {
    if (section === undefined) {
      return false;
    }
    covered += section;
  }
  const restrictions = reader.read(12);
  if (restrictions === undefined) {
    return false;
  }
  for (let i = 0; i < restrictions; i += 1) {
    // PurposeId and RestrictionType, then the vendors restricted.
    const vendors = reader.skip(6 + 2) ? rangeEntries(reader, TCF_LIMITS.maxVendorId) : undefined;
    if (vendors === undefined) {
      return false;
    }
    covered += vendors;
  }
  return covered <= TCF_LIMITS.coveredVendorIds;
}

/** Decoded strings, by core segment: a reader's reopens and clicks carry the same string. */
const DECODED = new Map<string, TcfConsent | null>();
const MAX_DECODED = 1024;

/**
 * A decoded TCF v2 string, reduced to what the exchange asks of it: whether a vendor may store and
 * access information on the device (purpose 1).
 */
export class TcfConsent {
  private constructor(private readonly model: TCModel) {}

  /**
   * The consent of a TCF string, or undefined when it does not decode as a TCF v2 string (a v1
   * string, a truncated one, any garbage): such a string consents to nothing.
   */
  static decode(consent: string | undefined): TcfConsent | undefined {
    if (consent === undefined || consent.length > PRIVACY_LIMITS.consentLength || !TCF_STRING.test(consent)) {
      return undefined;
    }
    // Only the core segment says what we ask: the disclosed vendors and the publisher's own
    // purposes (the other segments) are not decoded.
    const core = consent.split('.', 1)[0];
    if (core.length > MAX_TCF_CORE_LENGTH) {
      return undefined;
    }
    let decoded = DECODED.get(core);
    if (decoded === undefined) {
      decoded = TcfConsent.decodeCore(core);
      if (DECODED.size >= MAX_DECODED) {
        DECODED.clear();
      }
      DECODED.set(core, decoded);
    }
    return decoded ?? undefined;
  }

  private static decodeCore(core: string): TcfConsent | null {
    if (!isBoundedTcfCore(core)) {
      return null;
    }
    let model: TCModel;
    try {
      model = TCString.decode(core);
    } catch {
      return null;
    }
    return model.version === 2 ? new TcfConsent(model) : null;
  }

  /**
   * Purpose 1 for this vendor: the user consented to the purpose and to the vendor, the publisher
   * restricts neither (a restriction to legitimate interest rules purpose 1 out, which only
   * consent allows), and the CMP disclosed purpose 1 (`purposeOneTreatment` says it did not).
   */
  allowsStorage(vendorId: number): boolean {
    const { model } = this;
    if (model.purposeOneTreatment || !model.purposeConsents.has(STORAGE_PURPOSE)) {
      return false;
    }
    if (!model.vendorConsents.has(vendorId)) {
      return false;
    }
    const restriction = model.publisherRestrictions.getRestrictionType(vendorId, STORAGE_PURPOSE);
    return restriction !== RestrictionType.NOT_ALLOWED && restriction !== RestrictionType.REQUIRE_LI;
  }
}

/**
 * Whether a DSP may get user ids (`user.id`, `buyeruid`), the full IP address and a user sync:
 * not under COPPA; where GDPR applies, only with purpose 1 consent for its vendor id (a DSP
 * without one in the catalog gets none). Unknown GDPR applicability withholds nothing: a
 * publisher whose readers are in the EU says `gdpr: 1` in its catalog defaults or its tags.
 */
export function mayIdentifyUser(
  signals: PrivacySignals,
  consent: TcfConsent | undefined,
  vendorId: number | undefined,
): boolean {
  if (signals.coppa) {
    return false;
  }
  if (signals.gdpr !== 1) {
    return true;
  }
  return vendorId !== undefined && consent !== undefined && consent.allowsStorage(vendorId);
}

/**
 * An IP address without the part that singles out a household: the last octet of IPv4 (a /24),
 * all but the first 48 bits of IPv6 (a /48). Anything else becomes empty.
 */
export function truncateIp(ip: string): string {
  const version = isIP(ip);
  if (version === 4) {
    return ip.replace(/\.\d+$/, '.0');
  }
  if (version !== 6) {
    return '';
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) {
    return `::ffff:${truncateIp(mapped[1])}`;
  }
  const [head, tail = ''] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::')
    ? [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  const kept = groups
    .slice(0, 3)
    .map((g) => (g.includes('.') ? '0' : g.toLowerCase().replace(/^0+(?=.)/, '')));
  return `${kept.join(':')}::`;
}

/**
 * The privacy signals in OpenRTB 2.5's places (`regs.coppa`, `regs.ext.gdpr`, `regs.ext.us_privacy`,
 * `regs.ext.gpp`, `regs.ext.gpp_sid`, `user.ext.consent`); `toOpenRtb26` moves them to 2.6's.
 * Without `identify`, the user ids are removed and the IP address truncated. `user` stays the last
 * field, and its own fields keep their order after `ext`, so that a serialised request still ends
 * with the user's last id (`BidRequestBodies` splices `buyeruid` in there).
 */
export function applyPrivacy(request: BidRequest, signals: PrivacySignals, identify: boolean): BidRequest {
  const ext = {
    gdpr: signals.gdpr,
    us_privacy: signals.usPrivacy,
    gpp: signals.gpp,
    gpp_sid: signals.gppSid && [...signals.gppSid],
  };
  const hasExt = Object.values(ext).some((v) => v !== undefined);
  const regs: Regs | undefined =
    signals.coppa || hasExt
      ? { coppa: signals.coppa ? 1 : undefined, ext: hasExt ? ext : undefined }
      : undefined;
  const { user, ...rest } = request;
  const { ext: userExt, id, buyeruid, ...otherUser } = user ?? {};
  const consentExt =
    signals.gdprConsent === undefined ? userExt : { ...userExt, consent: signals.gdprConsent };
  const ids = identify ? { id, buyeruid } : {};
  const device =
    identify || rest.device?.ip === undefined
      ? rest.device
      : { ...rest.device, ip: truncateIp(rest.device.ip) || undefined };
  return { ...rest, device, regs, user: { ext: consentExt, ...otherUser, ...ids } };
}
