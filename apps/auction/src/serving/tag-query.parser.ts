import { readPrivacyParameters } from '@app/openrtb';
import { AGE_RANGES, GENDERS } from '@app/report-model';
import type { TagParameters } from '../core/ad-context';

/** Limits of the ad tag's query, beyond which a value is dropped (and the drop recorded). */
export const TAG_LIMITS = {
  /**
   * The whole query string: past it, nothing of it is used. Room for a TCF consent string and a
   * GPP string of a couple of kilobytes each beside the other parameters.
   */
  queryBytes: 8192,
  idLength: 128,
  keyValues: 20,
  keyLength: 64,
  valueLength: 128,
} as const;

/** Visible ASCII only: ids go into keys, events and URLs. */
const ID = /^[\x21-\x7e]+$/;
const RECIPIENT = /^[A-Za-z0-9+/=_.:-]{8,128}$/;
const DOMAIN = /^(?=.{3,253}$)[a-z0-9-]+(\.[a-z0-9-]+)+$/;
const KEY = /^[A-Za-z0-9_.-]+$/;
const VALUE = /^\P{Cc}+$/u;

export type TagQuery = Readonly<Record<string, string | string[] | undefined>>;

/** The length of a request target's query string, the part `TAG_LIMITS.queryBytes` bounds. */
export function queryLength(originalUrl: string): number {
  const at = originalUrl.indexOf('?');
  return at < 0 ? 0 : originalUrl.length - at - 1;
}

export interface ParsedTag {
  readonly tag: TagParameters;
  /** The parameters dropped and why, e.g. `age:invalid`; the request is still served. */
  readonly problems: readonly string[];
  /** The query was past its limit: nothing of it is used and only house or fallback ads serve. */
  readonly oversized: boolean;
}

const EMPTY_TAG: TagParameters = {
  placementId: '',
  listId: '',
  recipient: '',
  emailDomain: '',
  keyValues: [],
  age: '',
  gender: '',
  consent: false,
  privacy: {},
};

/**
 * Reads the ad tag's query (`placement`, `list`, `recipient`, `email_domain`, repeatable `kv`,
 * `age`, `gender`, `consent`, and the privacy signals `gdpr`, `gdpr_consent`, `us_privacy`, `gpp`,
 * `gpp_sid`; `cb` is a cache buster and ignored). A bad value is dropped and named in `problems`,
 * never a failure: the email still gets an ad.
 */
export function parseTagQuery(query: TagQuery, rawQueryLength: number): ParsedTag {
  if (rawQueryLength > TAG_LIMITS.queryBytes) {
    return { tag: EMPTY_TAG, problems: ['query:too_large'], oversized: true };
  }
  const problems: string[] = [];
  const single = (name: string): string => {
    const value = query[name];
    if (value === undefined) {
      return '';
    }
    if (Array.isArray(value)) {
      problems.push(`${name}:repeated`);
      return '';
    }
    return value;
  };
  const checked = (name: string, value: string, ok: boolean): string => {
    if (value === '' || ok) {
      return value;
    }
    problems.push(`${name}:invalid`);
    return '';
  };
  const id = (name: string) => {
    const value = single(name);
    return checked(name, value, value.length <= TAG_LIMITS.idLength && ID.test(value));
  };
  const recipient = single('recipient');
  const emailDomain = single('email_domain').toLowerCase();
  const age = single('age');
  const gender = single('gender').toLowerCase();
  const consent = single('consent');
  const privacy = readPrivacyParameters(single);
  problems.push(...privacy.problems);
  return {
    tag: {
      placementId: id('placement'),
      listId: id('list'),
      recipient: checked('recipient', recipient, RECIPIENT.test(recipient)),
      emailDomain: checked('email_domain', emailDomain, DOMAIN.test(emailDomain)),
      keyValues: keyValuesOf(query.kv, problems),
      age: checked('age', age, (AGE_RANGES as readonly string[]).includes(age)),
      gender: checked('gender', gender, (GENDERS as readonly string[]).includes(gender)),
      // Matching is on unless the tag says otherwise; a flag we cannot read turns it off.
      consent: consent === '' || checked('consent', consent, consent === '0' || consent === '1') === '1',
      privacy: privacy.signals,
    },
    problems,
    oversized: false,
  };
}

function keyValuesOf(raw: string | string[] | undefined, problems: string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (const item of raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) {
    const at = item.indexOf(':');
    const key = at > 0 ? item.slice(0, at) : '';
    const value = at > 0 ? item.slice(at + 1) : '';
    const ok =
      key.length <= TAG_LIMITS.keyLength &&
      KEY.test(key) &&
      value.length <= TAG_LIMITS.valueLength &&
      VALUE.test(value);
    if (!ok || pairs.length >= TAG_LIMITS.keyValues) {
      problems.push('kv:invalid');
    } else {
      pairs.push([key, value]);
    }
  }
  return pairs;
}
