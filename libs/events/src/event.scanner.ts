import { AD_EVENT_JSON_SCHEMA, type AdEvent } from './event.schema';

/**
 * Validates an ad event from its message's UTF-8 bytes without parsing it into objects: the
 * ingest's hot path (`JSON.parse`, the compiled validator and the garbage of 40-key objects were
 * two thirds of its CPU: bench/journal/pipeline.md, "the ingest's own cost").
 *
 * The scanner only ever says "valid" or "not decided". It says valid for the JSON that
 * `JSON.stringify` writes for a valid event, in any key order, with or without whitespace, and
 * non-ASCII text (checked as UTF-8); anything else (an escape in a string, a duplicate key, an
 * exponent, a value out of range, a date the calendar lacks) is left undecided, and the caller
 * decides with `parseAdEvent` as before, with the same reasons. So what the scanner accepts is
 * always what `parseAdEvent` accepts (`event.scanner.spec.ts` checks it on mutated events), and it
 * never rejects anything itself.
 *
 * After `scan` returns true, each field's value is at `bytes[start(f), end(f))`: a string's
 * content without its quotes (which needs no unescaping, since the scanner left every escape
 * undecided), a number's digits, `true` or `false`. The fields are the scanner's until its next
 * `scan`: `generation` says which scan they belong to.
 */

const STRING = 0;
const ENUM = 1;
const INTEGER = 2;
const BOOLEAN = 3;

/** What a field's value must be; one shape for every field, so that the scanner's reads of it stay monomorphic. */
class FieldRule {
  constructor(
    readonly kind: typeof STRING | typeof ENUM | typeof INTEGER | typeof BOOLEAN,
    readonly min = 0,
    readonly max = 0,
    /** Strings: the timestamp's pattern applies. */
    readonly ts = false,
    /** Enums of strings: the values, as bytes. */
    readonly strings: readonly Uint8Array[] = [],
    /** Enums of numbers: the values. */
    readonly numbers: readonly number[] | undefined = undefined,
  ) {}
}

const TS_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?Z$';

/**
 * The scanner's reading of one property of AD_EVENT_JSON_SCHEMA. A keyword it does not know
 * throws at load, so that the schema cannot gain a rule the scanner would not check.
 */
function fieldRule(name: string, schema: Record<string, unknown>): FieldRule {
  const known = new Set(['type', 'maxLength', 'minLength', 'pattern', 'enum', 'minimum', 'maximum']);
  for (const keyword of Object.keys(schema)) {
    if (!known.has(keyword)) {
      throw new Error(`event scanner: property ${name} has keyword ${keyword}, which it does not check`);
    }
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum as readonly unknown[];
    if (values.every((v) => typeof v === 'string')) {
      return new FieldRule(
        ENUM,
        0,
        0,
        false,
        values.map((v) => Buffer.from(v, 'latin1')),
      );
    }
    if (values.every((v) => Number.isSafeInteger(v) && (v as number) >= 0)) {
      const numbers = values as readonly number[];
      return new FieldRule(INTEGER, Math.min(...numbers), Math.max(...numbers), false, [], numbers);
    }
    throw new Error(`event scanner: property ${name} has an enum it does not check`);
  }
  switch (schema.type) {
    case 'string':
      if (schema.pattern !== undefined && schema.pattern !== TS_PATTERN) {
        throw new Error(`event scanner: property ${name} has a pattern it does not check`);
      }
      return new FieldRule(
        STRING,
        (schema.minLength as number | undefined) ?? 0,
        (schema.maxLength as number | undefined) ?? Number.MAX_SAFE_INTEGER,
        schema.pattern !== undefined,
      );
    case 'integer':
      return new FieldRule(INTEGER, schema.minimum as number, schema.maximum as number);
    case 'boolean':
      return new FieldRule(BOOLEAN);
    default:
      throw new Error(`event scanner: property ${name} has a type it does not check`);
  }
}

/** Every property of the event, in the schema's order: a field's number is its index here. */
export const SCANNED_FIELDS: readonly (keyof AdEvent)[] = Object.keys(
  AD_EVENT_JSON_SCHEMA.properties,
) as (keyof AdEvent)[];
const RULES: readonly FieldRule[] = SCANNED_FIELDS.map((name) =>
  fieldRule(name, (AD_EVENT_JSON_SCHEMA.properties as Record<string, Record<string, unknown>>)[name]),
);
/** Each field's key as JSON.stringify writes it, quotes and colon included. */
const KEYS: readonly Uint8Array[] = SCANNED_FIELDS.map((name) => Buffer.from(`"${name}":`, 'latin1'));
const FIELD_BY_NAME = new Map<string, number>(SCANNED_FIELDS.map((name, i) => [name, i]));
const REQUIRED_COUNT = AD_EVENT_JSON_SCHEMA.required.length;
const IS_REQUIRED: readonly boolean[] = SCANNED_FIELDS.map((name) =>
  (AD_EVENT_JSON_SCHEMA.required as readonly string[]).includes(name),
);
if (AD_EVENT_JSON_SCHEMA.additionalProperties !== false) {
  throw new Error('event scanner: it refuses unknown properties, as the schema must');
}

/** A field's number, for the callers that write rows from the fields. */
export function scannedField(name: keyof AdEvent): number {
  const field = FIELD_BY_NAME.get(name);
  if (field === undefined) {
    throw new Error(`not an event field: ${name}`);
  }
  return field;
}

/** The number of days in a month of the proleptic Gregorian calendar, as `Date.parse` has it. */
function daysIn(year: number, month: number): number {
  if (month === 2) {
    return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;

export class AdEventScanner {
  /** The bytes of the last scan. */
  bytes: Uint8Array = new Uint8Array(0);
  /** Increases at every scan: fields read for an earlier one are gone. */
  generation = 0;
  /** Whether the last scan's event has only ASCII in `event_id` (its FNV-1a can be taken on the bytes). */
  asciiEventId = false;
  private readonly starts = new Int32Array(SCANNED_FIELDS.length);
  /** Enums: the index of the value in the schema's list; booleans: 1 for true. */
  private readonly choices = new Int8Array(SCANNED_FIELDS.length);
  private readonly ends = new Int32Array(SCANNED_FIELDS.length);
  /** The generation that last saw each field: a field seen twice in one event is left undecided. */
  private readonly seen = new Float64Array(SCANNED_FIELDS.length);
  /** The fields in the order the last event had them: the next one most likely has the same. */
  private readonly order = new Int32Array(SCANNED_FIELDS.length + 1).fill(-1);
  private readonly eventIdField = scannedField('event_id');

  start(field: number): number {
    return this.starts[field];
  }

  end(field: number): number {
    return this.ends[field];
  }

  /** An enum field's value as its index in the schema's list (`type`: in EVENT_TYPES); a boolean's, 1 for true. */
  choice(field: number): number {
    return this.choices[field];
  }

  /** Whether the last scan's event has the field. */
  has(field: number): boolean {
    return this.seen[field] === this.generation;
  }

  /** True when `bytes[start, end)` is a valid event (its fields then read as above); false: not decided. */
  scan(bytes: Uint8Array, start: number, end: number): boolean {
    this.generation += 1;
    this.bytes = bytes;
    const generation = this.generation;
    let at = this.skipSpace(bytes, start, end);
    if (at >= end || bytes[at] !== OPEN) {
      return false;
    }
    at = this.skipSpace(bytes, at + 1, end);
    let required = 0;
    for (let position = 0; ; position += 1) {
      if (at >= end || bytes[at] !== QUOTE) {
        return false;
      }
      let field = position < this.order.length ? this.order[position] : -1;
      // Most events have their keys in the order of the one before: the bytes `"name":` of that
      // field are compared in one pass, with nothing else to check before its value.
      const key = field >= 0 ? KEYS[field] : undefined;
      if (key && at + key.length < end && equalBytes(key, bytes, at, at + key.length)) {
        at += key.length;
      } else {
        const nameStart = at + 1;
        let nameEnd = nameStart;
        while (nameEnd < end && bytes[nameEnd] !== QUOTE) {
          const byte = bytes[nameEnd];
          if (byte === BACKSLASH || byte < 0x20 || byte >= 0x80) {
            return false;
          }
          nameEnd += 1;
        }
        if (nameEnd >= end) {
          return false;
        }
        field = fieldNamed(bytes, nameStart, nameEnd);
        at = this.skipSpace(bytes, nameEnd + 1, end);
        if (at >= end || bytes[at] !== COLON) {
          return false;
        }
        at += 1;
      }
      if (field < 0 || this.seen[field] === generation) {
        return false;
      }
      this.seen[field] = generation;
      if (position < this.order.length) {
        this.order[position] = field;
      }
      if (at < end && bytes[at] <= 0x20) {
        at = this.skipSpace(bytes, at, end);
      }
      const valueEnd = this.value(field, bytes, at, end);
      if (valueEnd < 0) {
        return false;
      }
      if (IS_REQUIRED[field]) {
        required += 1;
      }
      at = valueEnd;
      if (at < end && bytes[at] <= 0x20) {
        at = this.skipSpace(bytes, at, end);
      }
      if (at >= end) {
        return false;
      }
      if (bytes[at] === CLOSE) {
        break;
      }
      if (bytes[at] !== COMMA) {
        return false;
      }
      at += 1;
      if (at < end && bytes[at] <= 0x20) {
        at = this.skipSpace(bytes, at, end);
      }
    }
    return this.skipSpace(bytes, at + 1, end) === end && required === REQUIRED_COUNT;
  }

  /** The bytes of one field as a string (slow: for tests and rare paths). */
  text(field: number): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString(
      'utf8',
      this.starts[field],
      this.ends[field],
    );
  }

  private skipSpace(bytes: Uint8Array, at: number, end: number): number {
    while (at < end) {
      const byte = bytes[at];
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) {
        return at;
      }
      at += 1;
    }
    return at;
  }

  /** Checks the value of `field` at `bytes[at]`; the index after it, or -1 when not decided. */
  private value(field: number, bytes: Uint8Array, at: number, end: number): number {
    const rule = RULES[field];
    switch (rule.kind) {
      case STRING:
      case ENUM: {
        if (at >= end || bytes[at] !== QUOTE) {
          return -1;
        }
        const from = at + 1;
        let to = from;
        // Code points beyond one a byte: the bytes of a code point less one, summed.
        let extra = 0;
        for (;;) {
          // Plain ASCII runs through one table load a byte.
          while (to < end && BYTE_CLASS[bytes[to]] === PLAIN) {
            to += 1;
          }
          if (to >= end) {
            return -1;
          }
          const byteClass = BYTE_CLASS[bytes[to]];
          if (byteClass === END_OF_STRING) {
            break;
          }
          if (byteClass === UNDECIDED) {
            return -1;
          }
          const length = utf8Sequence(bytes, to, end);
          if (length === 0) {
            return -1;
          }
          extra += length - 1;
          to += length;
        }
        const codePoints = to - from - extra;
        const ascii = extra === 0;
        this.starts[field] = from;
        this.ends[field] = to;
        if (rule.kind === ENUM) {
          const choice = oneOf(rule.strings, bytes, from, to);
          if (choice < 0) {
            return -1;
          }
          this.choices[field] = choice;
        } else if (
          codePoints < rule.min ||
          codePoints > rule.max ||
          (rule.ts && !validTimestamp(bytes, from, to))
        ) {
          return -1;
        }
        if (field === this.eventIdField) {
          this.asciiEventId = ascii;
        }
        return to + 1;
      }
      case INTEGER: {
        let to = at;
        let value = 0;
        while (to < end && bytes[to] >= ZERO && bytes[to] <= NINE) {
          value = value * 10 + (bytes[to] - ZERO);
          to += 1;
        }
        const digits = to - at;
        // No sign, no leading zero, no fraction or exponent, and few enough digits to be exact.
        if (digits === 0 || digits > 15 || (digits > 1 && bytes[at] === ZERO)) {
          return -1;
        }
        if (to < end && (bytes[to] === 0x2e || bytes[to] === 0x65 || bytes[to] === 0x45)) {
          return -1;
        }
        if (value < rule.min || value > rule.max || (rule.numbers && !rule.numbers.includes(value))) {
          return -1;
        }
        this.starts[field] = at;
        this.ends[field] = to;
        return to;
      }
      case BOOLEAN: {
        const length = equalAt(TRUE, bytes, at, end) ? 4 : equalAt(FALSE, bytes, at, end) ? 5 : 0;
        if (length === 0) {
          return -1;
        }
        this.starts[field] = at;
        this.ends[field] = at + length;
        this.choices[field] = length === 4 ? 1 : 0;
        return at + length;
      }
    }
  }
}

const PLAIN = 0;
const END_OF_STRING = 1;
const UNDECIDED = 2;
const MULTIBYTE = 3;
/** What a byte is inside a string: the quote ends it, a backslash or a control character is left undecided. */
const BYTE_CLASS = new Uint8Array(256).map((_, byte) =>
  byte === QUOTE
    ? END_OF_STRING
    : byte === BACKSLASH || byte < 0x20
      ? UNDECIDED
      : byte >= 0x80
        ? MULTIBYTE
        : PLAIN,
);

const TRUE = Buffer.from('true', 'latin1');
const FALSE = Buffer.from('false', 'latin1');

function equalBytes(expected: Uint8Array, bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start !== expected.length) {
    return false;
  }
  for (let i = 0; i < expected.length; i += 1) {
    if (bytes[start + i] !== expected[i]) {
      return false;
    }
  }
  return true;
}

/** The field whose name is `bytes[start, end)`, or -1. */
function fieldNamed(bytes: Uint8Array, start: number, end: number): number {
  const name = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, end);
  return FIELD_BY_NAME.get(name) ?? -1;
}

/** The index of the value `bytes[start, end)` is in `values`, or -1. */
function oneOf(values: readonly Uint8Array[], bytes: Uint8Array, start: number, end: number): number {
  for (let i = 0; i < values.length; i += 1) {
    if (equalBytes(values[i], bytes, start, end)) {
      return i;
    }
  }
  return -1;
}

function equalAt(expected: Uint8Array, bytes: Uint8Array, at: number, end: number): boolean {
  return at + expected.length <= end && equalBytes(expected, bytes, at, at + expected.length);
}

/**
 * The length of the well-formed UTF-8 sequence of a code point at `bytes[at]` (2 to 4), or 0 for
 * anything that decoding would replace with U+FFFD (overlong forms, surrogates, past U+10FFFF,
 * cut short): such text is left to the slow path, which sees what decoding makes of it.
 */
function utf8Sequence(bytes: Uint8Array, at: number, end: number): number {
  const first = bytes[at];
  let length: number;
  let min: number;
  let codePoint: number;
  if (first >= 0xc2 && first <= 0xdf) {
    length = 2;
    min = 0x80;
    codePoint = first & 0x1f;
  } else if (first >= 0xe0 && first <= 0xef) {
    length = 3;
    min = 0x800;
    codePoint = first & 0x0f;
  } else if (first >= 0xf0 && first <= 0xf4) {
    length = 4;
    min = 0x10000;
    codePoint = first & 0x07;
  } else {
    return 0;
  }
  if (at + length > end) {
    return 0;
  }
  for (let i = 1; i < length; i += 1) {
    const next = bytes[at + i];
    if ((next & 0xc0) !== 0x80) {
      return 0;
    }
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  if (codePoint < min || codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint <= 0xdfff)) {
    return 0;
  }
  return length;
}

function digitsAt(bytes: Uint8Array, at: number, count: number): number {
  let value = 0;
  for (let i = 0; i < count; i += 1) {
    const byte = bytes[at + i];
    if (byte < ZERO || byte > NINE) {
      return -1;
    }
    value = value * 10 + (byte - ZERO);
  }
  return value;
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.f{1,6}]Z` (the schema's pattern) naming a time that exists: month 1-12,
 * a day of that month, hour 0-23, minute and second 0-59. `Date.parse` takes all of these; what
 * it would refuse, and anything unusual it might take (hour 24), is left to it.
 */
function validTimestamp(bytes: Uint8Array, from: number, to: number): boolean {
  const length = to - from;
  if (length !== 20 && (length < 22 || length > 27)) {
    return false;
  }
  if (
    bytes[from + 4] !== 0x2d ||
    bytes[from + 7] !== 0x2d ||
    bytes[from + 10] !== 0x54 ||
    bytes[from + 13] !== COLON ||
    bytes[from + 16] !== COLON ||
    bytes[to - 1] !== 0x5a
  ) {
    return false;
  }
  if (length > 20 && (bytes[from + 19] !== 0x2e || digitsAt(bytes, from + 20, length - 21) < 0)) {
    return false;
  }
  const year = digitsAt(bytes, from, 4);
  const month = digitsAt(bytes, from + 5, 2);
  const day = digitsAt(bytes, from + 8, 2);
  const hour = digitsAt(bytes, from + 11, 2);
  const minute = digitsAt(bytes, from + 14, 2);
  const second = digitsAt(bytes, from + 17, 2);
  return (
    year >= 0 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour >= 0 &&
    hour <= 23 &&
    minute >= 0 &&
    minute <= 59 &&
    second >= 0 &&
    second <= 59
  );
}

/**
 * An event the scanner found valid, in its message's bytes: `fields` is the scanner while it still
 * holds this event's fields (until it scans the next message), and `toEvent()` the event as an
 * object, parsed from the bytes on demand (for a store that wants objects).
 */
export class ScannedAdEvent {
  private readonly generation: number;

  constructor(
    private readonly scanner: AdEventScanner,
    readonly bytes: Uint8Array,
    readonly start: number,
    readonly end: number,
  ) {
    this.generation = scanner.generation;
  }

  get fields(): AdEventScanner | undefined {
    return this.scanner.generation === this.generation ? this.scanner : undefined;
  }

  toEvent(): AdEvent {
    const text = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString(
      'utf8',
      this.start,
      this.end,
    );
    return JSON.parse(text) as AdEvent;
  }
}
