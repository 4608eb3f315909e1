import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GVL, PurposeRestriction, RestrictionType, TCModel, TCString } from '@iabtechlabtcf/core';
import { describe, expect, it } from 'vitest';
import type { BidRequest } from './openrtb.types';
import {
  PRIVACY_LIMITS,
  TCF_LIMITS,
  TcfConsent,
  isBoundedTcfCore,
  applyPrivacy,
  mayIdentifyUser,
  mergePrivacy,
  readPrivacyParameters,
  truncateIp,
  type PrivacyParameter,
} from './privacy';

/** Real consent strings from Prebid Server's tests: test/fixtures/tcf/SOURCES.md. */
const CONSENT = JSON.parse(
  readFileSync(path.resolve(__dirname, '../../../test/fixtures/tcf/consent-strings.json'), 'utf8'),
) as Record<string, string>;

/**
 * A vendor list of two vendors (2 and 6) with purposes 1 and 2, flexible: the encoder needs one,
 * and a publisher restriction is only encoded for a vendor whose purposes allow it.
 */
function vendorList(): GVL {
  const purpose = (id: number) => ({ id, name: `purpose ${id}`, description: '', illustrations: [] });
  const vendor = (id: number) => ({
    id,
    name: `vendor ${id}`,
    purposes: [1, 2],
    legIntPurposes: [],
    flexiblePurposes: [1, 2],
    specialPurposes: [],
    features: [],
    specialFeatures: [],
    policyUrl: 'https://vendor.example/privacy',
  });
  return new GVL({
    gvlSpecificationVersion: 2,
    vendorListVersion: 150,
    tcfPolicyVersion: 2,
    lastUpdated: '2020-01-01T00:00:00Z',
    purposes: { 1: purpose(1), 2: purpose(2) },
    specialPurposes: {},
    features: {},
    specialFeatures: {},
    vendors: { 2: vendor(2), 6: vendor(6) },
    stacks: {},
  } as unknown as ConstructorParameters<typeof GVL>[0]);
}

/** A TCF v2 string made with the reference library's encoder, for what no public string shows. */
function encoded(edit: (model: TCModel) => void): string {
  const model = new TCModel(vendorList());
  model.cmpId = 10;
  model.cmpVersion = 1;
  model.purposeConsents.set([1, 2]);
  model.vendorConsents.set([2, 6]);
  edit(model);
  return TCString.encode(model);
}

describe('TcfConsent', () => {
  it.each([
    ['vendor2AndPurpose1Consent', 2, true],
    ['vendor2AndPurpose1Consent', 6, false],
    ['vendor2NoPurpose1Consent', 2, false],
    ['purpose1NoVendorConsent', 2, false],
    ['vendor2AndPurpose2Consent', 2, false],
    ['fullConsentVendors2And6And8', 2, true],
    ['fullConsentVendors2And6And8', 6, true],
    ['fullConsentVendors2And6And8', 8, true],
    ['fullConsentVendors2And6And8', 10, false],
    ['validTCF2Consent', 2, false],
  ])('%s gives vendor %i storage consent: %s', (name, vendor, expected) => {
    const consent = TcfConsent.decode(CONSENT[name]);
    expect(consent).toBeDefined();
    expect(consent!.allowsStorage(vendor)).toBe(expected);
  });

  it.each([
    ['a malformed string (Prebid Server)', CONSENT.malformedBON],
    ['a TCF v1 string', CONSENT.validTCF1Consent],
    ['empty', ''],
    ['undefined', undefined],
    ['not base64url', '%%%%'],
    ['a truncated v2 string', CONSENT.vendor2AndPurpose1Consent.slice(0, 20)],
    ['a string with a space', `${CONSENT.vendor2AndPurpose1Consent} x`],
    ['a huge string', 'C'.repeat(PRIVACY_LIMITS.consentLength + 1)],
    ['a huge string within the limit', `CP${'A'.repeat(PRIVACY_LIMITS.consentLength - 2)}`],
    ['a dot only', '.'],
    ['an empty segment', 'CPGWbY_PGWbY_GYAAAENABCAAIAAAAAAAAAAACEAAAAA..YAAAAAAAAAAA'],
  ])('%s decodes to no consent, without throwing', (_name, text) => {
    const consent = TcfConsent.decode(text);
    expect(consent?.allowsStorage(2) ?? false).toBe(false);
  });

  it('refuses purpose 1 where the publisher restricts it for the vendor', () => {
    const open = encoded(() => undefined);
    const notAllowed = encoded((m) =>
      m.publisherRestrictions.add(2, new PurposeRestriction(1, RestrictionType.NOT_ALLOWED)),
    );
    const legitimateInterest = encoded((m) =>
      m.publisherRestrictions.add(2, new PurposeRestriction(1, RestrictionType.REQUIRE_LI)),
    );
    const otherVendor = encoded((m) =>
      m.publisherRestrictions.add(6, new PurposeRestriction(1, RestrictionType.NOT_ALLOWED)),
    );
    expect(TcfConsent.decode(open)!.allowsStorage(2)).toBe(true);
    expect(TcfConsent.decode(notAllowed)!.allowsStorage(2)).toBe(false);
    expect(TcfConsent.decode(legitimateInterest)!.allowsStorage(2)).toBe(false);
    expect(TcfConsent.decode(otherVendor)!.allowsStorage(2)).toBe(true);
    expect(TcfConsent.decode(otherVendor)!.allowsStorage(6)).toBe(false);
  });

  it('refuses purpose 1 when the CMP did not disclose it (purposeOneTreatment)', () => {
    const undisclosed = encoded((m) => {
      m.purposeOneTreatment = true;
    });
    expect(TcfConsent.decode(undisclosed)!.allowsStorage(2)).toBe(false);
  });
});

/** A TCF v2 core segment written bit by bit: what a crafted string looks like. */
function core(parts: { purposes: number[]; sections: Section[]; restrictions?: Section[] }): string {
  let bits = '';
  const put = (value: number, size: number) => {
    bits += value.toString(2).padStart(size, '0');
  };
  put(2, 6);
  // Created and last updated, then CMP id 10 and version 1 (the library wants them set), consent
  // screen, language, vendor list version 150, policy version 2, and the flags and opt-ins.
  bits += '0'.repeat(36 + 36);
  put(10, 12);
  put(1, 12);
  bits += '0'.repeat(6 + 12);
  put(150, 12);
  put(2, 6);
  bits += '0'.repeat(1 + 1 + 12);
  bits += Array.from({ length: 24 }, (_, i) => (parts.purposes.includes(i + 1) ? '1' : '0')).join('');
  bits += '0'.repeat(24 + 1 + 12);
  const ranges = (entries: readonly (readonly [number, number])[]) => {
    put(entries.length, 12);
    for (const [start, end] of entries) {
      put(1, 1);
      put(start, 16);
      put(end, 16);
    }
  };
  for (const section of parts.sections) {
    put(section.maxVendorId, 16);
    put(1, 1);
    ranges(section.ranges);
  }
  put(parts.restrictions?.length ?? 0, 12);
  for (const restriction of parts.restrictions ?? []) {
    put(1, 6);
    put(0, 2);
    ranges(restriction.ranges);
  }
  bits = bits.padEnd(Math.ceil(bits.length / 6) * 6, '0');
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  return (bits.match(/.{6}/g) ?? []).map((six) => alphabet[parseInt(six, 2)]).join('');
}

interface Section {
  readonly maxVendorId: number;
  readonly ranges: readonly (readonly [number, number])[];
}

describe('TcfConsent against crafted strings: bounded work before the library decodes', () => {
  const all = (maxVendorId: number): Section => ({ maxVendorId, ranges: [[1, maxVendorId]] });

  it('decodes a well-formed string covering every vendor of a large list', () => {
    const text = core({ purposes: [1, 2], sections: [all(1500), all(1500)] });
    expect(isBoundedTcfCore(text)).toBe(true);
    expect(TcfConsent.decode(text)?.allowsStorage(2)).toBe(true);
    expect(TcfConsent.decode(text)?.allowsStorage(1501)).toBe(false);
  });

  it.each([
    [
      'ranges that cover the whole id space again and again',
      {
        purposes: [1],
        sections: [
          {
            maxVendorId: TCF_LIMITS.maxVendorId,
            ranges: Array.from({ length: 300 }, () => [1, TCF_LIMITS.maxVendorId] as const),
          },
          all(10),
        ],
      },
    ],
    ['a vendor id past the bound', { purposes: [1], sections: [all(TCF_LIMITS.maxVendorId + 1), all(10)] }],
    [
      'a range ending before it starts',
      { purposes: [1], sections: [{ maxVendorId: 100, ranges: [[50, 10]] }, all(10)] },
    ],
    [
      "a range past the section's max vendor id",
      { purposes: [1], sections: [{ maxVendorId: 100, ranges: [[1, 200]] }, all(10)] },
    ],
    [
      'publisher restrictions over the whole id space',
      {
        purposes: [1],
        sections: [all(10), all(10)],
        restrictions: Array.from({ length: 20 }, () => all(TCF_LIMITS.maxVendorId)),
      },
    ],
  ])('refuses %s: consent to nothing', (_name, parts) => {
    const text = core(parts as Parameters<typeof core>[0]);
    expect(text.length).toBeLessThanOrEqual(PRIVACY_LIMITS.consentLength);
    expect(isBoundedTcfCore(text)).toBe(false);
    expect(TcfConsent.decode(text)).toBeUndefined();
  });

  it('refuses a truncated string before the library reads past its end', () => {
    const text = core({ purposes: [1], sections: [all(1500), all(1500)] });
    expect(isBoundedTcfCore(text.slice(0, 40))).toBe(false);
    expect(isBoundedTcfCore(text.slice(0, -3))).toBe(false);
  });
});

describe('mayIdentifyUser', () => {
  const yes = TcfConsent.decode(CONSENT.vendor2AndPurpose1Consent);
  const no = TcfConsent.decode(CONSENT.vendor2NoPurpose1Consent);

  it.each([
    ['GDPR not applying', { gdpr: 0 as const }, no, 2, true],
    ['GDPR unknown', {}, undefined, undefined, true],
    ['GDPR with consent for the vendor', { gdpr: 1 as const }, yes, 2, true],
    ['GDPR without purpose 1', { gdpr: 1 as const }, no, 2, false],
    ['GDPR with consent for another vendor', { gdpr: 1 as const }, yes, 6, false],
    ['GDPR, a DSP without a vendor id', { gdpr: 1 as const }, yes, undefined, false],
    ['GDPR without a consent string', { gdpr: 1 as const }, undefined, 2, false],
    ['COPPA', { coppa: true }, yes, 2, false],
    ['COPPA and consent', { gdpr: 1 as const, coppa: true }, yes, 2, false],
  ])('%s: %s', (_name, signals, consent, vendor, expected) => {
    expect(mayIdentifyUser(signals, consent, vendor)).toBe(expected);
  });
});

describe('readPrivacyParameters', () => {
  const read = (query: Partial<Record<PrivacyParameter, string>>) =>
    readPrivacyParameters((name) => query[name] ?? '');

  it('reads every parameter', () => {
    expect(
      read({
        gdpr: '1',
        gdpr_consent: CONSENT.vendor2AndPurpose1Consent,
        us_privacy: '1ynn',
        gpp: `DBABMA~${CONSENT.vendor2AndPurpose1Consent}`,
        gpp_sid: '2,6',
      }),
    ).toEqual({
      signals: {
        gdpr: 1,
        gdprConsent: CONSENT.vendor2AndPurpose1Consent,
        usPrivacy: '1YNN',
        gpp: `DBABMA~${CONSENT.vendor2AndPurpose1Consent}`,
        gppSid: [2, 6],
      },
      problems: [],
    });
  });

  it('leaves what is absent undefined', () => {
    expect(read({ gdpr: '0' })).toEqual({
      signals: { gdpr: 0, gdprConsent: undefined, usPrivacy: undefined, gpp: undefined, gppSid: undefined },
      problems: [],
    });
  });

  it.each([
    ['gdpr', '2'],
    ['gdpr', 'true'],
    ['gdpr_consent', 'CP GW'],
    ['gdpr_consent', '<script>'],
    ['gdpr_consent', `C${'A'.repeat(PRIVACY_LIMITS.consentLength)}`],
    ['us_privacy', '2YNN'],
    ['us_privacy', '1YNNN'],
    ['us_privacy', '1XYZ'],
    ['gpp', 'DBABMA~"'],
    ['gpp', `D${'A'.repeat(PRIVACY_LIMITS.gppLength)}`],
    ['gpp_sid', '2,,6'],
    ['gpp_sid', '-1'],
    ['gpp_sid', '2;6'],
    ['gpp_sid', Array.from({ length: PRIVACY_LIMITS.gppSections + 1 }, (_, i) => i).join(',')],
  ] as const)('drops %s=%s as invalid', (name, value) => {
    const { signals, problems } = read({ [name]: value });
    expect(problems).toEqual([`${name}:invalid`]);
    expect(Object.values(signals).every((v) => v === undefined)).toBe(true);
  });
});

describe('mergePrivacy', () => {
  it("takes the request's signals over the publisher's defaults, and COPPA from the publisher", () => {
    expect(
      mergePrivacy(
        { gdpr: 0, usPrivacy: '1NNN' },
        { gdpr: 1, usPrivacy: '1YYN', gpp: 'DBABMA~x', gppSid: [2], coppa: true },
      ),
    ).toEqual({
      gdpr: 0,
      usPrivacy: '1NNN',
      gpp: 'DBABMA~x',
      gppSid: [2],
      coppa: true,
      gdprConsent: undefined,
    });
    expect(mergePrivacy({}, undefined)).toEqual({});
  });
});

describe('truncateIp', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0'],
    ['203.0.113.0', '203.0.113.0'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::'],
    ['2001:DB8:0085::1', '2001:db8:85::'],
    ['2001:db8::1', '2001:db8:0::'],
    ['::1', '0:0:0::'],
    ['::ffff:203.0.113.77', '::ffff:203.0.113.0'],
    ['', ''],
    ['not an address', ''],
  ])('%s becomes %s', (ip, expected) => {
    expect(truncateIp(ip)).toBe(expected);
  });
});

describe('applyPrivacy', () => {
  const request: BidRequest = {
    id: 'a-1',
    imp: [{ id: '1' }],
    device: { ua: 'UA', ip: '203.0.113.77' },
    user: { id: 'u-1', buyeruid: 'b-1' },
  };

  it("puts the signals in OpenRTB 2.5's places, user last and its ids last", () => {
    const out = applyPrivacy(
      request,
      { gdpr: 1, gdprConsent: 'CPx', usPrivacy: '1YNN', gpp: 'DBA~x', gppSid: [2, 6], coppa: true },
      true,
    );
    expect(out).toEqual({
      ...request,
      regs: { coppa: 1, ext: { gdpr: 1, us_privacy: '1YNN', gpp: 'DBA~x', gpp_sid: [2, 6] } },
      user: { ext: { consent: 'CPx' }, id: 'u-1', buyeruid: 'b-1' },
    });
    expect(Object.keys(out).at(-1)).toBe('user');
    expect(JSON.stringify(out).endsWith('"id":"u-1","buyeruid":"b-1"}}')).toBe(true);
  });

  it('removes the user ids and truncates the IP address when the user may not be identified', () => {
    const out = applyPrivacy(request, { gdpr: 1, gdprConsent: 'CPx' }, false);
    expect(JSON.parse(JSON.stringify(out))).toEqual({
      id: 'a-1',
      imp: [{ id: '1' }],
      device: { ua: 'UA', ip: '203.0.113.0' },
      regs: { ext: { gdpr: 1 } },
      user: { ext: { consent: 'CPx' } },
    });
  });

  it('sends no regs when there is no signal', () => {
    expect(JSON.parse(JSON.stringify(applyPrivacy(request, {}, true)))).toEqual(request);
  });
});
