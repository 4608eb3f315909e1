import { describe, expect, it } from 'vitest';
import { parseTagQuery, TAG_LIMITS } from './tag-query.parser';

describe('parseTagQuery', () => {
  it('reads every parameter of the ad tag', () => {
    const { tag, problems, oversized } = parseTagQuery(
      {
        placement: 'plc-20261122-1',
        list: 'list-7',
        recipient: 'a1b2c3d4e5f6',
        email_domain: 'Gmail.COM',
        kv: ['topic:gardening', 'tier:premium'],
        age: '25-34',
        gender: 'Female',
        cb: '12345',
      },
      120,
    );
    expect(problems).toEqual([]);
    expect(oversized).toBe(false);
    expect(tag).toEqual({
      placementId: 'plc-20261122-1',
      listId: 'list-7',
      recipient: 'a1b2c3d4e5f6',
      emailDomain: 'gmail.com',
      keyValues: [
        ['topic', 'gardening'],
        ['tier', 'premium'],
      ],
      age: '25-34',
      gender: 'female',
      consent: true,
      privacy: {},
    });
  });

  it('reads the privacy signals, and drops a malformed one as a problem', () => {
    const consent = 'CPGWbY_PGWbY_GYAAAENABCAAIAAAAAAAAAAACEAAAAA';
    const { tag, problems } = parseTagQuery(
      { gdpr: '1', gdpr_consent: consent, us_privacy: '1YNN', gpp: 'DBABMA~x', gpp_sid: '2,6' },
      120,
    );
    expect(problems).toEqual([]);
    expect(tag.privacy).toEqual({
      gdpr: 1,
      gdprConsent: consent,
      usPrivacy: '1YNN',
      gpp: 'DBABMA~x',
      gppSid: [2, 6],
    });
    const bad = parseTagQuery({ gdpr: 'yes', gdpr_consent: ['a', 'b'], us_privacy: '1' }, 40);
    expect([...bad.problems].sort()).toEqual(['gdpr:invalid', 'gdpr_consent:repeated', 'us_privacy:invalid']);
    expect(Object.values(bad.tag.privacy).every((v) => v === undefined)).toBe(true);
  });

  it('takes a consent string past the old 4 KB query limit: room for TCF and GPP strings', () => {
    const consent = `CP${'A'.repeat(3000)}`;
    const query = { gdpr: '1', gdpr_consent: consent, gpp: `DBABMA~${consent}` };
    const { tag, oversized } = parseTagQuery(query, 6100);
    expect(oversized).toBe(false);
    expect(tag.privacy.gdprConsent).toBe(consent);
  });

  it.each([
    ['placement', { placement: 'a\r\nb' }, 'placement:invalid'],
    ['placement', { placement: 'x'.repeat(TAG_LIMITS.idLength + 1) }, 'placement:invalid'],
    ['recipient', { recipient: 'short' }, 'recipient:invalid'],
    ['recipient', { recipient: ['aaaaaaaa1', 'bbbbbbbb2'] }, 'recipient:repeated'],
    ['email_domain', { email_domain: 'not a domain' }, 'email_domain:invalid'],
    ['age', { age: '17' }, 'age:invalid'],
    ['gender', { gender: 'robot' }, 'gender:invalid'],
    ['kv', { kv: 'no-colon' }, 'kv:invalid'],
    ['kv', { kv: '<script>:x' }, 'kv:invalid'],
    ['kv', { kv: 'key:\u0000' }, 'kv:invalid'],
    ['consent', { consent: 'yes' }, 'consent:invalid'],
  ])('drops a bad %s and names it', (_name, query, problem) => {
    const parsed = parseTagQuery(query, 50);
    expect(parsed.problems).toContain(problem);
    expect(parsed.oversized).toBe(false);
  });

  it('turns matching off on consent=0 or an unreadable flag, and keeps it on when the tag says nothing', () => {
    expect(parseTagQuery({ consent: '0' }, 10).tag.consent).toBe(false);
    expect(parseTagQuery({ consent: '1' }, 10).tag.consent).toBe(true);
    expect(parseTagQuery({}, 0).tag.consent).toBe(true);
    expect(parseTagQuery({ consent: 'yes' }, 10).tag.consent).toBe(false);
  });

  it('keeps at most the limit of key-values', () => {
    const kv = Array.from({ length: TAG_LIMITS.keyValues + 3 }, (_, i) => `k${i}:v`);
    const parsed = parseTagQuery({ kv }, 400);
    expect(parsed.tag.keyValues).toHaveLength(TAG_LIMITS.keyValues);
    expect(parsed.problems).toHaveLength(3);
  });

  it('uses nothing of a query past its limit', () => {
    const parsed = parseTagQuery({ placement: 'p', recipient: 'a1b2c3d4e5f6' }, TAG_LIMITS.queryBytes + 1);
    expect(parsed.oversized).toBe(true);
    expect(parsed.tag.recipient).toBe('');
  });
});
