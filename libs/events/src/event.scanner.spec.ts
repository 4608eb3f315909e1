import { describe, expect, it } from 'vitest';
import { Random } from '@app/demo-traffic';
import { AdEventScanner, SCANNED_FIELDS, ScannedAdEvent, scannedField } from './event.scanner';
import { EVENT_SCHEMA_VERSION, emptyDimensions, parseAdEvent, type AdEvent } from './event.schema';

/** The demo traffic's seeded generator (mulberry32): a failure repeats with its seed. */
function random(seed: number): () => number {
  const generator = new Random(seed);
  return () => generator.next();
}

const impression: AdEvent = {
  ...emptyDimensions(),
  publisher_id: 'pub-4',
  ad_slot_id: 'slot-4-1-2',
  country: 'US',
  region: 'Île-de-France',
  device_model: 'iPhone 15 ✓',
  browser: 'Mail 😀',
  v: EVENT_SCHEMA_VERSION,
  event_id: '3-0',
  type: 'impression',
  ts: '2026-11-24T17:28:36.220Z',
  reopen: false,
  spend_micros: 1700,
  revenue_micros: 1360,
};

/** Valid events of every type, with every optional field, and strings at their longest. */
const VALID: readonly AdEvent[] = [
  impression,
  { ...impression, v: 1, reopen: true, ts: '2024-02-29T23:59:59Z' },
  { ...impression, type: 'click', reopen: undefined, ts: '2026-01-01T00:00:00.1Z' },
  { ...impression, type: 'conversion', attribution: 'post_view', ts: '2026-12-31T12:30:45.123456Z' },
  { ...impression, type: 'conversion', attribution: 'post_click', spend_micros: 0, revenue_micros: 0 },
  {
    ...impression,
    type: 'bid',
    dsp_id: 'dsp-1',
    price_micros: 999_999_999_999_999,
    auction_id: 'a'.repeat(64),
    bid_status: 'rejected',
    reason: 'below_floor',
    loss_code: 65535,
    deal_id: 'deal-9',
    user_id: 'u-1',
  },
  { ...impression, type: 'auction', event_id: 'é'.repeat(64), zip: '😀'.repeat(256) },
  { ...impression, type: 'win', dsp_id: 'dsp-2', price_micros: 0, loss_code: 0 },
].map((event) => JSON.parse(JSON.stringify(event)) as AdEvent);

/** The same event written differently: keys in another order, whitespace between the tokens. */
function serialisations(event: AdEvent, next: () => number): string[] {
  const keys = Object.keys(event);
  const shuffled = [...keys].sort(() => next() - 0.5);
  const reordered = JSON.stringify(
    Object.fromEntries(shuffled.map((key) => [key, event[key as keyof AdEvent]])),
  );
  return [JSON.stringify(event), reordered, JSON.stringify(event, null, 1), ` \t${JSON.stringify(event)}\r `];
}

/** Replacement values that a field may wrongly (or unusually) hold. */
const ODD_VALUES = [
  'null',
  'true',
  'false',
  '0',
  '-1',
  '1.0',
  '1e3',
  '01',
  '9007199254740993',
  '1234567890123456',
  '65536',
  '3',
  '""',
  '"x"',
  '"a\\"b"',
  '"\\u00e9"',
  '"tab\\there"',
  `"${'x'.repeat(65)}"`,
  `"${'x'.repeat(257)}"`,
  '[]',
  '{}',
  '"2026-02-30T00:00:00Z"',
  '"2026-02-28T24:00:00Z"',
  '"2026-13-01T00:00:00Z"',
  '"2026-11-24T17:28:36.1234567Z"',
  '"2026-11-24 17:28:36Z"',
  '"impression"',
  '"post_view"',
  '"won"',
];

/** Bytes that are not well-formed UTF-8, or are unusual in JSON. */
const ODD_BYTES = [
  [0xff],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf4, 0x90, 0x80, 0x80],
  [0xef, 0xbb, 0xbf],
  [0x00],
  [0x09],
  [0x0a],
  [0x5c],
  [0x22],
];

function mutate(text: string, next: () => number): Buffer {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const bytes = Buffer.from(text);
  const at = Math.floor(next() * bytes.length);
  switch (Math.floor(next() * 7)) {
    case 0: {
      // A value replaced: find a key and swap what follows its colon up to the next comma or brace.
      const field = pick(SCANNED_FIELDS);
      const key = `"${field}":`;
      const start = text.indexOf(key);
      if (start < 0) {
        return Buffer.from(text.replace(/}\s*$/, `,${key}${pick(ODD_VALUES)}}`));
      }
      const from = start + key.length;
      let to = from;
      if (text[to] === '"') {
        to = text.indexOf('"', to + 1) + 1;
      } else {
        while (to < text.length && !',}'.includes(text[to])) {
          to += 1;
        }
      }
      return Buffer.from(text.slice(0, from) + pick(ODD_VALUES) + text.slice(to));
    }
    case 1: {
      // A key left out, doubled or unknown.
      const field = pick(SCANNED_FIELDS);
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return bytes.subarray(0, at);
      }
      const choice = next();
      if (choice < 0.4) {
        delete event[field];
        return Buffer.from(JSON.stringify(event));
      }
      if (choice < 0.7) {
        return Buffer.from(text.replace(/}\s*$/, `,"${field}":${JSON.stringify(event[field] ?? 1)}}`));
      }
      return Buffer.from(text.replace(/}\s*$/, `,"${pick(['extra', '__proto__', 'Type', 'v '])}":1}`));
    }
    case 2:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(ODD_BYTES)), bytes.subarray(at)]);
    case 3:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(ODD_BYTES)), bytes.subarray(at + 1)]);
    case 4:
      return bytes.subarray(0, at);
    case 5:
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + Math.floor(next() * 4))]);
    default: {
      const copy = Buffer.from(bytes);
      copy[at] = Math.floor(next() * 256);
      return copy;
    }
  }
}

/** The scanner's verdict checked against parseAdEvent's; whether the scanner found it valid. */
function agrees(scanner: AdEventScanner, bytes: Buffer, seed: number): boolean {
  const framed = Buffer.concat([Buffer.from('x\n'), bytes, Buffer.from('\ny')]);
  const valid = scanner.scan(framed, 2, 2 + bytes.length);
  if (!valid) {
    return false;
  }
  const parsed = parseAdEvent(bytes.toString());
  const context = `seed ${seed}: ${bytes.toString()}`;
  expect(parsed.ok, context).toBe(true);
  const event = (parsed as { event: AdEvent }).event;
  expect(new ScannedAdEvent(scanner, framed, 2, 2 + bytes.length).toEvent(), context).toEqual(event);
  for (const [field, name] of SCANNED_FIELDS.entries()) {
    const value = event[name];
    expect(scanner.has(field), `${context} (${name})`).toBe(value !== undefined);
    if (value !== undefined) {
      // A string's content, or a number's or boolean's JSON, between start and end.
      expect(scanner.text(field), `${context} (${name})`).toBe(
        typeof value === 'string' ? value : JSON.stringify(value),
      );
    }
  }
  return true;
}

describe('AdEventScanner', () => {
  it('finds every valid event valid, however it is written, with each field where it is', () => {
    const scanner = new AdEventScanner();
    const next = random(1);
    for (const event of VALID) {
      for (const text of serialisations(event, next)) {
        expect(agrees(scanner, Buffer.from(text), 1), text).toBe(true);
      }
    }
  });

  it('gives the enum index and the boolean of the fields a row is made from', () => {
    const scanner = new AdEventScanner();
    const text = JSON.stringify({ ...VALID[3], reopen: true });
    expect(scanner.scan(Buffer.from(text), 0, Buffer.byteLength(text))).toBe(true);
    expect(scanner.choice(scannedField('type'))).toBe(5);
    expect(scanner.choice(scannedField('attribution'))).toBe(1);
    expect(scanner.choice(scannedField('reopen'))).toBe(1);
    expect(scanner.asciiEventId).toBe(true);
    const accented = JSON.stringify(VALID[6]);
    expect(scanner.scan(Buffer.from(accented), 0, Buffer.byteLength(accented))).toBe(true);
    expect(scanner.asciiEventId).toBe(false);
  });

  it('never finds valid what parseAdEvent refuses, nor reads a field otherwise (40,000 mutated events)', () => {
    const scanner = new AdEventScanner();
    let accepted = 0;
    let refused = 0;
    for (let seed = 1; seed <= 40_000; seed += 1) {
      const next = random(seed);
      const base = serialisations(VALID[seed % VALID.length], next)[seed % 4];
      let bytes = mutate(base, next);
      if (next() < 0.3) {
        bytes = mutate(bytes.toString('latin1'), next);
      }
      if (agrees(scanner, bytes, seed)) {
        accepted += 1;
      } else if (!parseAdEvent(bytes.toString()).ok) {
        refused += 1;
      }
    }
    // Both sides of the comparison were exercised: mutations that stay valid and ones that do not.
    console.log(`scanner fuzz: ${accepted} found valid, ${refused} refused by parseAdEvent`);
    expect(accepted).toBeGreaterThan(1_000);
    expect(refused).toBeGreaterThan(20_000);
  }, 120_000);

  it('leaves escapes, exponents and duplicate keys to parseAdEvent', () => {
    const scanner = new AdEventScanner();
    const text = JSON.stringify(impression);
    for (const undecided of [
      text.replace('"pub-4"', '"pub\\u002d4"'),
      text.replace('1700', '1.7e3'),
      text.replace(/}$/, ',"country":"FR"}'),
      text.replace('"v":2', '"v":2.0'),
    ]) {
      expect(scanner.scan(Buffer.from(undecided), 0, Buffer.byteLength(undecided))).toBe(false);
      expect(parseAdEvent(undecided).ok).toBe(true);
    }
  });

  it('forgets the fields of an event once it scans another', () => {
    const scanner = new AdEventScanner();
    const text = Buffer.from(JSON.stringify(impression));
    scanner.scan(text, 0, text.length);
    const first = new ScannedAdEvent(scanner, text, 0, text.length);
    expect(first.fields).toBe(scanner);
    scanner.scan(text, 0, text.length);
    expect(first.fields).toBeUndefined();
    expect(first.toEvent()).toEqual(impression);
  });
});
