import { request } from 'undici';
import { Random } from '@app/demo-traffic';
import { ReportCode, roundDecimal } from '@app/report-model';
import { sha1Hex } from './report-client';
import { RESULT_CODE_TABLE } from './result-code-table';
import { TEST_USERS } from './test-catalog';

/**
 * The fuzzer of `POST /api`, shared by the e2e suite (test/e2e/reporting-fuzz.test.ts, a few thousand
 * requests) and the long run beside the benchmarks (bench/reporting-fuzz.bench.ts, 100,000): JSON
 * and XML bodies mutated from valid requests, relative dates of any size, random content types,
 * Accept headers, request ids and methods. Every answer must carry a result code of reporting part 7
 * (docs/specification-notes.md#reporting-part-7) with its HTTP status, never 53, only valid header
 * values, and a JSON report's totals record must be the sum of its rows.
 */

/** 903 has two more precise statuses: a body too large, a method other than POST. */
const OTHER_STATUSES_OF_903 = [413, 405];

type User = keyof typeof TEST_USERS;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Valid requests the mutations start from: every user, type, split kind, filter, sort and format. */
const BASES: readonly { user: User; body: JsonObject }[] = [
  {
    user: 'pub',
    body: {
      type: 'publisher',
      startDate: '2026-11-01',
      endDate: '2026-11-21',
      splits: ['day'],
      columns: ['impressions', 'clicks', 'ctr', 'revenue'],
    },
  },
  {
    user: 'pub',
    body: {
      function: 'data',
      type: 'publisher',
      startDate: '-7 days',
      endDate: 'yesterday',
      splits: ['country'],
      columns: ['publisher_name', 'impressions', 'net_cpm', 'weather'],
      filters: [{ dimension: 'publisher_id', operator: 'equals', values: ['pub-1', 'pub-2'] }],
      sort: { impressions: 'desc', country: null },
      format: { columnNames: 'top', columnTotals: 'bottom' },
    },
  },
  {
    user: 'adv',
    body: {
      type: 'advertiser',
      startDate: 'first day of last month',
      endDate: '2026-11-20',
      splits: ['campaign_id'],
      columns: ['campaign_name', 'impressions', 'spend', 'gross_cpc', 'ccr'],
      filters: [{ dimension: 'hour', operator: 'not equals', values: [3, '4'] }],
      sort: { spend: 'asc' },
    },
  },
  {
    user: 'lite',
    body: {
      startDate: '2026-11-15',
      endDate: '2026-11-21',
      splits: [],
      columns: ['impressions', 'gross_cpm', 'revenue'],
      format: { columnTotals: 'top' },
    },
  },
  {
    user: 'pub2',
    body: {
      type: 'publisher',
      startDate: 'last day of previous week',
      endDate: 'yesterday',
      splits: ['device_type'],
      columns: ['impressions', 'unique_impressions', 'reopens'],
      sort: { device_type: 'asc' },
    },
  },
  // The shapes of issue 22: far-off relative dates (a 500 once), and totals on top (once a second
  // read, which disagreed with the rows while an ingest ran).
  {
    user: 'pub2',
    body: {
      type: 'publisher',
      function: 'data',
      startDate: 'last day of last quarter',
      endDate: '-9007199254740993 seconds',
      splits: ['device_maker'],
      columns: ['advertiser_domain', 'campaign_id', 'creative_name'],
      format: { columnTotals: 'bottom' },
    },
  },
  {
    user: 'pub',
    body: {
      type: 'publisher',
      startDate: 'first day of last quarter',
      endDate: '-99999999999 years',
      splits: ['metro'],
      columns: [
        'reopens',
        'post_view_conversions',
        'template_id',
        'advertiser_domain',
        'campaign_id',
        'advertiser_name',
        'ctr',
        'reopens',
      ],
      format: { columnTotals: 'off' },
    },
  },
  {
    user: 'adv',
    body: {
      type: 'advertiser',
      startDate: '1 fortnight ago',
      endDate: 'yesterday',
      splits: ['demand_type'],
      columns: ['clicks', 'conversions', 'publisher_id', 'demand_type'],
      sort: { conversions: 'desc' },
      format: { columnTotals: 'top' },
    },
  },
];

const FIELDS = [
  'id',
  'seed',
  'hash',
  'function',
  'type',
  'startDate',
  'endDate',
  'splits',
  'columns',
  'filters',
  'sort',
  'format',
];
const NAMES = ['day', 'country', 'impressions', 'clicks', 'ctr', 'spend', 'hour', 'publisher_id', 'zip'];
const NASTY_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' ',
];
const CONTROL = [
  '\0',
  '\r',
  '\n',
  '\r\n',
  '\t',
  '\b',
  '\f',
  '\v',
  '\x1b',
  '\x7f',
  '\x85',
  '\u2028',
  '\u2029',
];
const UNICODE = [
  'é',
  'ß',
  '中文',
  '🙂',
  '🏳️‍🌈',
  '\u200b',
  '\u202e',
  'e\u0301',
  '\uFEFF',
  '\uD800',
  '\uDC00',
  'ﬀ',
];
const INJECTIONS = [
  "' OR 1=1 --",
  '"; DROP TABLE exact_daily; --',
  '<script>alert(1)</script>',
  '\r\nX-Injected: 1',
  '${7*7}',
  '%00',
  '%0d%0a',
  '../../etc/passwd',
  'a,b',
  '2026-02-30',
  '+1 year',
  'first day of next year',
];

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  'APPLICATION/JSON',
  'application/xml; charset=ISO-8859-1',
  'text/xml; charset="utf-8"',
  '*/*',
  'application/vnd.api+json',
  'garbage',
  'text/html',
  ';',
  '',
];
const ACCEPTS = [
  '*/*',
  'application/json',
  'application/xml',
  'text/xml',
  'text/html',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'text/html;q=0.2, application/json;q=0.8',
  'application/json;q=0, text/html',
  'text/*',
  'application/*;q=0.5, */*;q=0.1',
  '*/*;q=0',
  'image/png',
  'application/json; charset=utf-8',
  'text/html;level=1;q=0.9',
  'garbage',
  ';;;,,,',
  'text/html;q=abc',
  'application/*',
  `${'application/json;q=0.1, '.repeat(200)}text/html`,
  '',
];
/** Every unit word of the date parser, and offsets from one to far past what any date holds. */
const DATE_UNITS = [
  'sec',
  'secs',
  'second',
  'seconds',
  'min',
  'mins',
  'minute',
  'minutes',
  'hour',
  'hours',
  'day',
  'days',
  'week',
  'weeks',
  'fortnight',
  'fortnights',
  'forthnight',
  'month',
  'months',
  'year',
  'years',
];
const DATE_AMOUNTS = [
  '0',
  '1',
  '7',
  '59',
  '400',
  '20779',
  '20780',
  '49370',
  '99999999999',
  '9007199254740991',
  '9007199254740993',
  '9223372036854775808',
  '99999999999999999999',
  '9'.repeat(40),
];
const DATE_PREFIXES = [
  '',
  'yesterday ',
  'today ',
  'first day of ',
  'last day of ',
  'monday ',
  'last week ',
  'last day of last quarter ',
];

const METHODS = ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'] as const;

const VALID_HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PERCENT_ENCODED = /^(?:[A-Za-z0-9\-_.!~*'()]|%[0-9A-F]{2})*$/;

/** Sets any key, `__proto__` included, as an own enumerable property. */
function setKey(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The generator of mutations, on the seeded PRNG of the demo traffic. */
export class ReportingFuzzer extends Random {
  /** Long strings (up to 70,000 characters) only where `long` says: a few per body at most. */
  string(long = false): string {
    const kind = this.int(9);
    if (kind === 0) {
      return this.pick(NAMES);
    }
    if (kind === 1) {
      return this.pick(INJECTIONS);
    }
    if (kind === 2) {
      return this.pick(['x', 'é', '\0', '🙂']).repeat(
        this.pick(long ? [64, 65, 257, 5_000, 70_000] : [64, 65, 257]),
      );
    }
    if (kind === 3) {
      return '';
    }
    let out = '';
    const length = 1 + this.int(24);
    for (let i = 0; i < length; i += 1) {
      const roll = this.next();
      if (roll < 0.25) {
        out += this.pick(CONTROL);
      } else if (roll < 0.5) {
        out += this.pick(UNICODE);
      } else if (roll < 0.6) {
        out += String.fromCharCode(this.int(0x20));
      } else if (roll < 0.65) {
        out += String.fromCharCode(this.int(0x10000));
      } else {
        out += String.fromCharCode(0x20 + this.int(0x5f));
      }
    }
    return out;
  }

  number(): number {
    return this.pick([
      0,
      -1,
      1,
      1.5,
      -0.5,
      1e21,
      -1e308,
      2 ** 53 + 2,
      1_795_000_000,
      4_294_967_296,
      20261101,
    ]);
  }

  /** Nested arrays or objects, from just past our depth limit to past the XML parser's. */
  deep(): Json {
    const depth = this.pick([9, 12, 101, 500]);
    let value: Json = this.chance(0.5) ? 1 : 'x';
    const asObject = this.chance(0.5);
    for (let i = 0; i < depth; i += 1) {
      value = asObject ? { a: value } : [value];
    }
    return value;
  }

  value(depth = 0): Json {
    const kind = this.int(depth > 2 ? 6 : 9);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
        return this.number();
      case 3:
      case 4:
      case 5:
        return this.string(depth === 0);
      case 6:
        if (this.chance(0.1)) {
          return Array.from({ length: this.pick([101, 1_001]) }, () => this.pick(NAMES));
        }
        return Array.from({ length: this.pick([0, 1, 2, 5]) }, () =>
          this.chance(0.5) ? this.pick(NAMES) : this.value(depth + 1),
        );
      case 7: {
        const object: JsonObject = {};
        for (let i = this.int(4); i > 0; i -= 1) {
          setKey(object, this.key(), this.value(depth + 1));
        }
        return object;
      }
      default:
        return this.deep();
    }
  }

  key(): string {
    const roll = this.int(4);
    if (roll === 0) {
      return this.pick(NASTY_KEYS);
    }
    if (roll === 1) {
      return this.pick(FIELDS);
    }
    return this.string().slice(0, 40);
  }

  /** One structural change somewhere in the request. */
  mutate(body: JsonObject): void {
    const containers: (JsonObject | Json[])[] = [];
    const walk = (node: Json): void => {
      if (Array.isArray(node)) {
        containers.push(node);
        node.forEach(walk);
      } else if (typeof node === 'object' && node !== null) {
        containers.push(node);
        Object.values(node).forEach(walk);
      }
    };
    walk(body);
    const target = this.chance(0.5) ? body : this.pick(containers);
    if (Array.isArray(target)) {
      const roll = this.int(4);
      if (roll === 0 && target.length > 0) {
        target.splice(this.int(target.length), 1);
      } else if (roll === 1) {
        target.push(this.value());
      } else if (target.length > 0) {
        target[this.int(target.length)] = this.value();
      } else {
        target.push(this.pick(NAMES));
      }
      return;
    }
    const keys = Object.keys(target);
    const roll = this.int(5);
    if (roll === 0 && keys.length > 0) {
      delete target[this.pick(keys)];
    } else if (roll === 1) {
      setKey(target, this.key(), this.value());
    } else if (keys.length > 0) {
      setKey(target, this.pick(keys), this.value());
    } else {
      setKey(target, this.pick(FIELDS), this.value());
    }
  }

  /** A relative date: one or two offsets, huge and negative ones too, in any unit, maybe `ago`. */
  relativeDate(): string {
    const offsets = Array.from(
      { length: 1 + this.int(2) },
      () => `${this.pick(['', '+', '-', '- '])}${this.pick(DATE_AMOUNTS)} ${this.pick(DATE_UNITS)}`,
    );
    return `${this.pick(DATE_PREFIXES)}${offsets.join(' ')}${this.chance(0.3) ? ' ago' : ''}`;
  }

  /** Column names a header cannot carry as they are. */
  hostileColumns(): string[] {
    return Array.from({ length: 1 + this.int(4) }, () =>
      this.chance(0.3) ? this.pick(NAMES) : this.string().slice(0, 64),
    );
  }

  /** Byte-level damage to a serialized body. */
  damage(text: string): Buffer {
    let bytes = Buffer.from(text, 'utf8');
    const roll = this.int(6);
    if (roll === 0) {
      return bytes.subarray(0, this.int(bytes.length + 1));
    }
    if (roll === 1) {
      return Buffer.from(Array.from({ length: this.int(2_000) }, () => this.int(256)));
    }
    if (roll === 2) {
      return Buffer.concat([Buffer.from(this.pick(['\uFEFF', ' \n\t', '\0', ")]}'\n"])), bytes]);
    }
    for (let n = 1 + this.int(4); n > 0; n -= 1) {
      const at = this.int(bytes.length + 1);
      const insert = Buffer.from(
        roll === 3
          ? [this.int(256)]
          : [...this.pick(['{', '}', '[', ']', '"', ',', ':', '<', '>', '&', '/'])].map((c) =>
              c.charCodeAt(0),
            ),
      );
      bytes = Buffer.concat([bytes.subarray(0, at), insert, bytes.subarray(roll === 5 ? at + 1 : at)]);
    }
    return bytes;
  }
}

function xmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Reporting part 4.1's XML form (docs/specification-notes.md#reporting-part-4-1): arrays as repeated
 * elements, objects as nested ones.
 */
function toXml(value: Json, name: string): string {
  if (Array.isArray(value)) {
    return value.map((item) => toXml(item, name)).join('');
  }
  if (typeof value === 'object' && value !== null) {
    return `<${name}>${Object.entries(value)
      .map(([key, item]) => toXml(item, key))
      .join('')}</${name}>`;
  }
  return `<${name}>${xmlText(value === null ? '' : String(value))}</${name}>`;
}

/** XML that parsers choke on, spliced into an otherwise valid document. */
function xmlHazard(fuzz: ReportingFuzzer): string {
  const depth = fuzz.pick([9, 99, 101, 150, 1_000, 20_000]);
  return fuzz.pick([
    `${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`,
    `${'<a>'.repeat(depth)}`,
    '<constructor>1</constructor>',
    '<__proto__><admin>1</admin></__proto__>',
    '<prototype/>',
    '<toString>x</toString>',
    '<id attr="1" other=\'2\'>x</id>',
    '<![CDATA[<data>]]>',
    '<!-- comment -->',
    '<?pi data?>',
    '<!DOCTYPE data [<!ENTITY x "y">]>',
    '&amp;&lt;&#x0;&#xD800;&#99999999;&unknown;',
    '<a:b xmlns:a="urn:x">1</a:b>',
    '</data><data>',
    '<columns>',
    '</columns>',
    `<id>${'x'.repeat(fuzz.pick([100, 70_000]))}</id>`,
  ]);
}

export interface FuzzRequest {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  /** The column names sent, when the body still says them as generated. */
  readonly columns?: readonly string[];
  readonly note: string;
}

/**
 * One request: a base mutated, maybe with relative dates in place of its own, signed (or signed
 * wrongly) with `nextSeed()`, serialized as JSON or XML (maybe damaged), with random headers.
 */
export function generateFuzzRequest(fuzz: ReportingFuzzer, nextSeed: () => number): FuzzRequest {
  const base = fuzz.pick(BASES);
  const user = fuzz.chance(0.9)
    ? base.user
    : fuzz.pick(['pub', 'adv', 'lite', 'disabled', 'suspended', 'noApi'] as const);
  const body = structuredClone(base.body);
  const notes: string[] = [`base ${BASES.indexOf(base)} as ${user}`];
  if (fuzz.chance(0.25)) {
    body.columns = fuzz.hostileColumns();
    notes.push('hostile columns');
  }
  const mutations = fuzz.chance(0.15) ? 0 : 1 + fuzz.int(3);
  for (let i = 0; i < mutations; i += 1) {
    fuzz.mutate(body);
  }
  if (mutations > 0) {
    notes.push(`${mutations} mutation(s)`);
  }
  if (fuzz.chance(0.2)) {
    const fields = fuzz.pick([['startDate'], ['endDate'], ['startDate', 'endDate']]);
    for (const field of fields) {
      setKey(body, field, fuzz.relativeDate());
    }
    notes.push(`relative ${fields.join(' and ')}`);
  }

  const signed: JsonObject = {};
  const signing = fuzz.int(20);
  const seed = nextSeed();
  const { token } = TEST_USERS[user];
  setKey(signed, 'id', signing === 0 ? fuzz.value() : TEST_USERS[user].id);
  setKey(signed, 'seed', signing === 1 ? fuzz.value() : signing === 2 ? String(seed) : seed);
  setKey(
    signed,
    'hash',
    signing === 3 ? fuzz.value() : signing === 4 ? sha1Hex(`${seed}${token}`) : sha1Hex(`${token}${seed}`),
  );
  if (signing === 5) {
    delete signed[fuzz.pick(['id', 'seed', 'hash'])];
  }
  for (const [key, value] of Object.entries(body)) {
    setKey(signed, key, value);
  }
  const columns = Array.isArray(signed.columns) ? signed.columns : undefined;
  const knownColumns = columns?.every((c) => typeof c === 'string') ? columns : undefined;

  const asXml = fuzz.chance(0.3);
  let text = asXml ? toXml(signed, 'data') : JSON.stringify(signed);
  if (asXml && fuzz.chance(0.3)) {
    const at = text.indexOf('>') + 1 + fuzz.int(Math.max(1, text.length - 14));
    text = `${text.slice(0, at)}${xmlHazard(fuzz)}${text.slice(at)}`;
    notes.push('XML hazard');
  } else if (!asXml && fuzz.chance(0.1)) {
    text = text.replace('{', `{"columns":["x"],"seed":0,"type":${JSON.stringify(fuzz.string())},`);
    notes.push('duplicate keys');
  } else if (!asXml && fuzz.chance(0.05)) {
    const depth = fuzz.pick([9, 1_000, 100_000]);
    text = text.replace(/"columns":/, `"columns":${'['.repeat(depth)}${']'.repeat(depth)},"x":`);
    notes.push('deep JSON');
  }
  if (asXml && fuzz.chance(0.3)) {
    text = `<?xml version="1.0" encoding="UTF-8"?>\n${text}`;
  }
  const damaged = fuzz.chance(0.15);
  let payload = damaged ? fuzz.damage(text) : Buffer.from(text, 'utf8');
  if (damaged) {
    notes.push('damaged bytes');
  }
  if (fuzz.chance(0.01)) {
    payload = Buffer.concat([payload, Buffer.alloc(1024 * 1024, 0x20)]);
    notes.push('over 1 MiB');
  }

  const headers: Record<string, string> = {};
  const typeRoll = fuzz.int(10);
  if (typeRoll < 6) {
    headers['content-type'] = asXml ? fuzz.pick(['text/xml', 'application/xml']) : 'application/json';
  } else if (typeRoll < 8) {
    headers['content-type'] = fuzz.pick(CONTENT_TYPES);
  }
  if (fuzz.chance(0.6)) {
    headers.accept = fuzz.pick(ACCEPTS);
  }
  const idRoll = fuzz.int(8);
  if (idRoll === 0) {
    headers['x-request-id'] =
      fuzz
        .string()
        .replace(/[^\x21-\x7e]/g, '')
        .slice(0, 128) || 'r';
  } else if (idRoll === 1) {
    headers['x-request-id'] = fuzz.pick(['a'.repeat(129), 'with space', 'tab\there', 'é', '']);
  }
  const method = fuzz.chance(0.93) ? 'POST' : fuzz.pick(METHODS);
  return {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : payload,
    // XML trims text and normalizes line ends: only JSON keeps the names exactly.
    columns: damaged || asXml ? undefined : knownColumns,
    note: notes.join(', '),
  };
}

/** What is wrong with an answer, if anything. */
export function problemsOf(
  sent: FuzzRequest,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    for (const item of [value ?? ''].flat()) {
      if (!VALID_HEADER_VALUE.test(item)) {
        problems.push(`header ${name} holds ${JSON.stringify(item)}`);
      }
    }
  }
  const code = Number(headers['x-report-code']) as ReportCode;
  if (!(code in RESULT_CODE_TABLE)) {
    return [...problems, `X-Report-Code ${String(headers['x-report-code'])} is no code of part 7`];
  }
  if (code === ReportCode.InternalError) {
    problems.push('code 53');
  }
  const expected = RESULT_CODE_TABLE[code].status;
  const allowed = code === ReportCode.InvalidInput ? [expected, ...OTHER_STATUSES_OF_903] : [expected];
  if (!allowed.includes(status)) {
    problems.push(`status ${status} for code ${code}`);
  }

  const id = headers['x-request-id'];
  const sentId = sent.headers['x-request-id'];
  const validSentId = sentId !== undefined && /^[\x21-\x7e]{1,128}$/.test(sentId);
  if (typeof id !== 'string' || (validSentId ? id !== sentId : !UUID.test(id))) {
    problems.push(`X-Request-Id ${JSON.stringify(id)} for ${JSON.stringify(sentId)}`);
  }

  const removed = headers['x-report-removed'];
  if (removed !== undefined) {
    const items = String(removed).split(',');
    if (!items.every((item) => PERCENT_ENCODED.test(item))) {
      problems.push(`X-Report-Removed ${JSON.stringify(removed)} is not percent-encoded`);
    } else if (sent.columns) {
      const sentNames = sent.columns.map((c) => c.replace(/\p{Cs}/gu, '\uFFFD'));
      const unknown = items.map(decodeURIComponent).filter((name) => !sentNames.includes(name));
      if (unknown.length > 0) {
        problems.push(`X-Report-Removed names ${JSON.stringify(unknown)}, never sent`);
      }
    }
  }

  const contentType = String(headers['content-type'] ?? '');
  if (
    sent.method !== 'HEAD' &&
    code !== ReportCode.Ok &&
    code !== ReportCode.NoData &&
    code !== ReportCode.DimensionsRemoved
  ) {
    if (contentType.startsWith('application/json')) {
      const error = (JSON.parse(text) as { error?: { code?: number } }).error;
      if (error?.code !== code) {
        problems.push(`JSON error body with code ${error?.code}`);
      }
    } else if (contentType.startsWith('application/xml')) {
      if (!text.includes(`<code>${code}</code>`)) {
        problems.push('XML error body without its code');
      }
    } else if (contentType.startsWith('text/html')) {
      if (!text.includes(`Error ${code}`)) {
        problems.push('HTML error page without its code');
      }
    } else {
      problems.push(`error answered as ${contentType}`);
    }
  }
  return problems;
}

const COUNT_COLUMNS = [
  'impressions',
  'unique_impressions',
  'reopens',
  'clicks',
  'conversions',
  'post_view_conversions',
];
const MONEY_COLUMNS = ['revenue', 'spend'];
const TOTALS_LABEL = '(totals)';

/**
 * Whether a JSON report's totals record is the sum of its rows: its counts exactly, its money within
 * the rows' rounding (each row rounds exact micros to 4 places, the totals their exact sum once),
 * its `ctr` recomputed from the summed counts. `checked` is false for a body without a totals
 * record named `(totals)` (none asked for, or a report without a split).
 */
export function totalsProblems(text: string): { checked: boolean; problems: string[] } {
  const records = JSON.parse(text) as unknown;
  if (!Array.isArray(records)) {
    return { checked: false, problems: ['a report that is not an array'] };
  }
  const rows = records as Record<string, unknown>[];
  const totals = rows.find((record) => Object.values(record).includes(TOTALS_LABEL));
  if (totals === undefined) {
    return { checked: false, problems: [] };
  }
  // The names record (columnNames top) holds each field's own name.
  const data = rows.filter(
    (record) => record !== totals && !Object.entries(record).every(([key, value]) => key === value),
  );
  const sum = (column: string) => data.reduce((acc, row) => acc + Number(row[column]), 0);
  const problems: string[] = [];
  for (const [column, value] of Object.entries(totals)) {
    if (COUNT_COLUMNS.includes(column) && value !== sum(column)) {
      problems.push(`totals ${column} ${String(value)}, rows ${sum(column)}`);
    }
    if (
      MONEY_COLUMNS.includes(column) &&
      Math.abs(Number(value) - sum(column)) > data.length * 0.00005 + 1e-9
    ) {
      problems.push(`totals ${column} ${String(value)}, rows ${sum(column)}`);
    }
  }
  if ('ctr' in totals && 'impressions' in totals && 'clicks' in totals) {
    const impressions = sum('impressions');
    const ctr = impressions === 0 ? 0 : roundDecimal((sum('clicks') * 100) / impressions);
    if (totals.ctr !== ctr) {
      problems.push(`totals ctr ${String(totals.ctr)}, from the rows' sums ${ctr}`);
    }
  }
  return { checked: true, problems };
}

export interface FuzzRunOptions {
  readonly baseUrl: string;
  readonly seed: number;
  readonly requests: number;
  /** The seed of the next signed request (a ReportClient's). */
  readonly nextSeed: () => number;
  /** Runs before each request (a test moves its clock a second). */
  readonly beforeRequest?: () => void;
  /** Called every `progressEvery` requests. */
  readonly progress?: (done: number, run: FuzzRun) => void;
  readonly progressEvery?: number;
}

export interface FuzzRun {
  readonly requests: number;
  /** The first 100 failures, each with what was sent and why it failed. */
  readonly failures: string[];
  failureCount: number;
  /** Answers by result code. */
  readonly codes: Map<number, number>;
  /** JSON reports whose totals were checked against their rows. */
  totalsChecked: number;
  elapsedMs: number;
}

/** Sends `requests` fuzzed requests one after another and checks every answer. */
export async function runReportingFuzz(options: FuzzRunOptions): Promise<FuzzRun> {
  const fuzz = new ReportingFuzzer(options.seed);
  const run: FuzzRun = {
    requests: options.requests,
    failures: [],
    failureCount: 0,
    codes: new Map(),
    totalsChecked: 0,
    elapsedMs: 0,
  };
  const fail = (message: string) => {
    run.failureCount += 1;
    if (run.failures.length < 100) {
      run.failures.push(message);
    }
  };
  const started = Date.now();
  for (let i = 0; i < options.requests; i += 1) {
    options.beforeRequest?.();
    const sent = generateFuzzRequest(fuzz, options.nextSeed);
    let response;
    try {
      response = await request(`${options.baseUrl}/api`, {
        method: sent.method as 'POST',
        headers: sent.headers,
        body: sent.body,
      });
    } catch (error) {
      fail(`#${i} (${sent.note}): ${sent.method} failed: ${(error as Error).message}`);
      continue;
    }
    const text = Buffer.from(await response.body.arrayBuffer()).toString('utf8');
    const code = Number(response.headers['x-report-code']);
    run.codes.set(code, (run.codes.get(code) ?? 0) + 1);
    let problems: string[];
    try {
      problems = problemsOf(sent, response.statusCode, response.headers, text);
      const isReport = code === Number(ReportCode.Ok) || code === Number(ReportCode.DimensionsRemoved);
      if (
        isReport &&
        sent.method === 'POST' &&
        String(response.headers['content-type']).startsWith('application/json')
      ) {
        const totals = totalsProblems(text);
        run.totalsChecked += totals.checked ? 1 : 0;
        problems.push(...totals.problems);
      }
    } catch (error) {
      problems = [`unreadable answer: ${(error as Error).message}`];
    }
    if (problems.length > 0) {
      const body = sent.body?.toString('utf8') ?? '';
      fail(
        `#${i} (${sent.note}) ${sent.method} ${JSON.stringify(sent.headers)} ${JSON.stringify(body.slice(0, 300))}${body.length > 300 ? '…' : ''} -> ${response.statusCode} ${code}: ${problems.join('; ')}`,
      );
    }
    if (options.progress && (i + 1) % (options.progressEvery ?? 10_000) === 0) {
      run.elapsedMs = Date.now() - started;
      options.progress(i + 1, run);
    }
  }
  run.elapsedMs = Date.now() - started;
  return run;
}

/** The answers by code, `200×812 903×301 …`. */
export function codeCounts(run: FuzzRun): string {
  return [...run.codes]
    .sort(([a], [b]) => a - b)
    .map(([code, count]) => `${code}×${count}`)
    .join(' ');
}
