/**
 * Date expressions of the reporting API (reporting part 4.1, docs/specification-notes.md#reporting-part-4-1):
 * `YYYY-MM-DD`, the spec's own `[first/last] day of [this/last/previous/next] [week/isoweek/quarter/year]`,
 * and the relative forms of PHP's `strtotime` that analysts use, evaluated as PHP's timelib does (checked
 * against real PHP in test/contract/relative-date.oracle.test.ts). All arithmetic is in UTC, in exact
 * integers: a result is either the day PHP would name or refused, never a rounded or invalid day.
 */

/**
 * The first and last day a date expression may name: the days both stores can hold (ClickHouse
 * 18.16's Date runs from the UNIX epoch to 2105-12-31; DuckDB holds more, but the two answer alike).
 * An expression naming a day outside them is refused as out of range (903, naming the field).
 */
export const FIRST_SUPPORTED_DAY = '1970-01-01';
export const LAST_SUPPORTED_DAY = '2105-12-31';

/** What a date expression evaluates to: a supported day, or why there is none. */
export type DateExpressionResult =
  | { readonly day: string }
  /** Not a form the parser knows (or an impossible calendar date such as 2026-02-30). */
  | { readonly error: 'not-understood' }
  /**
   * A form the parser knows whose day falls outside FIRST_SUPPORTED_DAY to LAST_SUPPORTED_DAY, or
   * with an offset too large to compute exactly: beyond 2^53 - 1 in its unit (weeks and fortnights
   * counted in days), or in seconds once hours and minutes are carried. Such an offset alone is
   * 285 million years or more (PHP wraps it around into some day instead).
   */
  | { readonly error: 'out-of-range' };

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH_ABBR = MONTHS.map((m) => m.slice(0, 3));
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY_ABBR = WEEKDAYS.map((d) => d.slice(0, 3));

const UNIT_SECONDS: Record<string, 's' | 'i' | 'h' | 'd' | 'w' | 'f' | 'm' | 'y'> = {
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  min: 'i',
  mins: 'i',
  minute: 'i',
  minutes: 'i',
  hour: 'h',
  hours: 'h',
  day: 'd',
  days: 'd',
  week: 'w',
  weeks: 'w',
  fortnight: 'f',
  fortnights: 'f',
  forthnight: 'f',
  month: 'm',
  months: 'm',
  year: 'y',
  years: 'y',
};

const RELATIVE_TEXT: Record<string, { amount: number; behavior: number }> = {
  last: { amount: -1, behavior: 0 },
  previous: { amount: -1, behavior: 0 },
  this: { amount: 0, behavior: 1 },
  next: { amount: 1, behavior: 0 },
};

interface Fields {
  y: number;
  m: number;
  d: number;
  h: number;
  i: number;
  s: number;
}

interface ParseState {
  date?: { y?: number; m: number; d?: number };
  time?: { h: number; i: number; s: number };
  unsetTime: boolean;
  rel: Fields;
  weekday?: { day: number; behavior: number };
  firstLast?: 'first' | 'last';
  /** An offset left the exact integers: the expression is out of range once it is understood. */
  overflow?: boolean;
}

function weekdayIndex(word: string): number {
  const full = WEEKDAYS.indexOf(word);
  return full >= 0 ? full : WEEKDAY_ABBR.indexOf(word);
}

function monthIndex(word: string): number {
  const full = MONTHS.indexOf(word);
  return full >= 0 ? full : MONTH_ABBR.indexOf(word);
}

const WEEKDAY_RE = `(?:${WEEKDAYS.join('|')}|${WEEKDAY_ABBR.join('|')})`;
const MONTH_RE = `(?:${MONTHS.join('|')}|${MONTH_ABBR.join('|')})`;
const UNIT_RE = `(?:${Object.keys(UNIT_SECONDS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`;
const END = '(?=\\s|$|[+-])';

/** Adds an offset in a unit; an offset beyond 2^53 - 1 of its unit marks the state as overflowing. */
function addUnit(st: ParseState, unit: string, amount: number): void {
  const rel = st.rel;
  switch (UNIT_SECONDS[unit]) {
    case 's':
      rel.s += amount;
      break;
    case 'i':
      rel.i += amount;
      break;
    case 'h':
      rel.h += amount;
      break;
    case 'd':
      rel.d += amount;
      break;
    case 'w':
      rel.d += amount * 7;
      break;
    case 'f':
      rel.d += amount * 14;
      break;
    case 'm':
      rel.m += amount;
      break;
    case 'y':
      rel.y += amount;
      break;
  }
  if (!Object.values(rel).every(Number.isSafeInteger)) {
    st.overflow = true;
  }
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Whether the day exists; any 4-digit year (Date.UTC would read 0050 as 1950). */
function validCalendarDate(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

type Rule = [RegExp, (match: RegExpExecArray, state: ParseState) => boolean];

const rule = (source: string, apply: Rule[1]): Rule => [new RegExp(source + END, 'y'), apply];

const RULES: Rule[] = [
  rule('(\\d{4})-(\\d{2})-(\\d{2})', (m, st) => {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (!validCalendarDate(y, mo, d)) {
      return false;
    }
    st.date = { y, m: mo, d };
    return true;
  }),
  rule('(\\d{1,2})/(\\d{1,2})/(\\d{4})', (m, st) => {
    const [mo, d, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (!validCalendarDate(y, mo, d)) {
      return false;
    }
    st.date = { y, m: mo, d };
    return true;
  }),
  rule('(first|last) day of', (m, st) => {
    st.firstLast = m[1] as 'first' | 'last';
    return true;
  }),
  rule('(last|previous|this|next) week', (m, st) => {
    const { amount } = RELATIVE_TEXT[m[1]];
    st.rel.d += amount * 7;
    if (!st.weekday) {
      st.weekday = { day: 1, behavior: 2 };
    } else {
      st.weekday.behavior = 2;
    }
    return true;
  }),
  rule(`(last|previous|this|next) (${WEEKDAY_RE})`, (m, st) => {
    const { amount, behavior } = RELATIVE_TEXT[m[1]];
    st.rel.d += (amount > 0 ? amount - 1 : amount) * 7;
    st.weekday = { day: weekdayIndex(m[2]), behavior };
    st.unsetTime = true;
    return true;
  }),
  rule(`(last|previous|this|next) (${UNIT_RE})`, (m, st) => {
    addUnit(st, m[2], RELATIVE_TEXT[m[1]].amount);
    return true;
  }),
  rule(`([+-]?)\\s*(\\d+)\\s*(${UNIT_RE})`, (m, st) => {
    addUnit(st, m[3], (m[1] === '-' ? -1 : 1) * Number(m[2]));
    return true;
  }),
  rule('ago', (_m, st) => {
    for (const k of Object.keys(st.rel) as (keyof Fields)[]) {
      st.rel[k] = -st.rel[k];
    }
    return true;
  }),
  rule('(now|today|midnight|noon|yesterday|tomorrow)', (m, st) => {
    switch (m[1]) {
      case 'now':
        break;
      case 'today':
      case 'midnight':
        st.unsetTime = true;
        st.time = undefined;
        break;
      case 'noon':
        st.time = { h: 12, i: 0, s: 0 };
        break;
      case 'yesterday':
        st.rel.d -= 1;
        st.unsetTime = true;
        st.time = undefined;
        break;
      case 'tomorrow':
        st.rel.d += 1;
        st.unsetTime = true;
        st.time = undefined;
        break;
    }
    return true;
  }),
  rule(`(${MONTH_RE}) (\\d{1,2})(?:st|nd|rd|th)?(?: (\\d{4}))?`, (m, st) => {
    const y = m[3] === undefined ? undefined : Number(m[3]);
    st.date = { y, m: monthIndex(m[1]) + 1, d: Number(m[2]) };
    return true;
  }),
  rule(`(\\d{1,2})(?:st|nd|rd|th)? (${MONTH_RE})(?: (\\d{4}))?`, (m, st) => {
    const y = m[3] === undefined ? undefined : Number(m[3]);
    st.date = { y, m: monthIndex(m[2]) + 1, d: Number(m[1]) };
    return true;
  }),
  rule(`(${MONTH_RE}) (\\d{4})`, (m, st) => {
    st.date = { y: Number(m[2]), m: monthIndex(m[1]) + 1, d: 1 };
    return true;
  }),
  rule(`(${MONTH_RE})`, (m, st) => {
    st.date = { m: monthIndex(m[1]) + 1 };
    return true;
  }),
  rule(`(${WEEKDAY_RE})`, (m, st) => {
    const behavior = st.weekday?.behavior === 2 ? 2 : 1;
    st.weekday = { day: weekdayIndex(m[1]), behavior };
    st.unsetTime = true;
    return true;
  }),
];

function toFields(date: Date): Fields {
  return {
    y: date.getUTCFullYear(),
    m: date.getUTCMonth() + 1,
    d: date.getUTCDate(),
    h: date.getUTCHours(),
    i: date.getUTCMinutes(),
    s: date.getUTCSeconds(),
  };
}

/** Thrown inside the evaluation when a value leaves the exact integers; caught in this module. */
class OutOfRange extends Error {}

/** `value` if it is an exact integer, else the evaluation is out of range. */
function exact(value: number): number {
  if (!Number.isSafeInteger(value)) {
    throw new OutOfRange();
  }
  return value;
}

/** Floor division and its non-negative remainder, exactly, for safe integers and a small divisor. */
function floorDivMod(a: number, b: number): [number, number] {
  let q = Math.floor(a / b);
  let r = exact(a - exact(q * b));
  // a / b is rounded to a double: one step corrects it.
  if (r < 0) {
    q -= 1;
    r += b;
  } else if (r >= b) {
    q += 1;
    r -= b;
  }
  return [q, r];
}

/** Days from 1970-01-01 to a proleptic Gregorian day (m 1-12, d 1-31), in exact integers. */
function daysFromCivil(y: number, m: number, d: number): number {
  const [era, yoe] = floorDivMod(m <= 2 ? exact(y - 1) : y, 400);
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return exact(exact(exact(era * 146_097) + doe) - 719_468);
}

/** The day `days` after 1970-01-01 (the inverse of daysFromCivil). */
function civilFromDays(days: number): { y: number; m: number; d: number } {
  const [era, doe] = floorDivMod(exact(days + 719_468), 146_097);
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: exact(exact(yoe + exact(era * 400)) + (m <= 2 ? 1 : 0)), m, d };
}

/** Days since 1970-01-01 of fields that may overflow (as Date.UTC and timelib carry them), and the second of the day. */
function epochDayOf(f: Fields): { days: number; second: number } {
  for (const value of [f.y, f.m, f.d, f.h, f.i, f.s]) {
    exact(value);
  }
  const seconds = exact(exact(exact(f.h * 3600) + exact(f.i * 60)) + f.s);
  const [dayCarry, second] = floorDivMod(seconds, 86_400);
  const [years, month0] = floorDivMod(exact(exact(f.y * 12) + (f.m - 1)), 12);
  const days = exact(exact(daysFromCivil(years, month0 + 1, 1) + exact(f.d - 1)) + dayCarry);
  return { days, second };
}

/** Carries over-full fields into the larger units: seconds into minutes up to years, days into months. */
function normalize(f: Fields): Fields {
  const { days, second } = epochDayOf(f);
  const { y, m, d } = civilFromDays(days);
  return { y, m, d, h: Math.floor(second / 3600), i: Math.floor((second % 3600) / 60), s: second % 60 };
}

function dayOfWeek(f: Fields): number {
  // 1970-01-01 was a Thursday.
  return floorDivMod(exact(epochDayOf(f).days + 4), 7)[1];
}

/** timelib's do_adjust_for_weekday: moves the date to the requested weekday. */
function adjustForWeekday(f: Fields, weekday: { day: number; behavior: number }, relDays: number): void {
  const current = dayOfWeek(f);
  let target = weekday.day;
  if (weekday.behavior === 2) {
    if (current === 0 && target !== 0) {
      target -= 7;
    }
    if (target === 0 && current !== 0) {
      target = 7;
    }
    f.d += target - current;
    return;
  }
  let difference = target - current;
  if ((relDays < 0 && difference < 0) || (relDays >= 0 && difference <= -weekday.behavior)) {
    difference += 7;
  }
  f.d += difference;
}

function evaluate(state: ParseState, now: Date): Fields {
  let f = toFields(now);
  if (state.date) {
    f.m = state.date.m;
    if (state.date.y !== undefined) {
      f.y = state.date.y;
    }
    if (state.date.d !== undefined) {
      f.d = state.date.d;
    }
  }
  if (state.time) {
    Object.assign(f, state.time);
  } else if (state.date || state.unsetTime) {
    Object.assign(f, { h: 0, i: 0, s: 0 });
  }
  if (state.weekday) {
    f = normalize(f);
    adjustForWeekday(f, state.weekday, state.rel.d);
    // The weekday's day is a real date before the offsets apply: Thursday 29 February 2024,
    // "monday +1 month" is Monday 4 March plus a month, 4 April (as PHP answers), not 2 April.
    f = normalize(f);
  }
  for (const k of Object.keys(state.rel) as (keyof Fields)[]) {
    f[k] += state.rel[k];
  }
  if (state.firstLast === 'first') {
    f.d = 1;
  }
  if (state.firstLast === 'last') {
    f.d = 0;
    f.m += 1;
  }
  return normalize(f);
}

function formatDay(f: Pick<Fields, 'y' | 'm' | 'd'>): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(f.y, 4)}-${pad(f.m)}-${pad(f.d)}`;
}

function utcDay(y: number, m: number, d: number): string {
  return formatDay(normalize({ y, m, d, h: 0, i: 0, s: 0 }));
}

const SPEC_FORM = /^(first|last) day of (this|last|previous|next) (week|isoweek|quarter|year)$/;

/**
 * The spec's own form, parsed before the PHP forms because PHP reads `first day of next year` as
 * the first day of the current month a year on. A `week` runs Sunday to Saturday, an `isoweek`
 * Monday to Sunday; quarters are calendar quarters.
 */
function parseSpecForm(text: string, now: Date): string | undefined {
  const match = SPEC_FORM.exec(text);
  if (!match) {
    return undefined;
  }
  const [, edge, which, period] = match;
  const shift = which === 'this' ? 0 : which === 'next' ? 1 : -1;
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() + 1;
  const d = now.getUTCDate();
  switch (period) {
    case 'year':
      return edge === 'first' ? utcDay(y + shift, 1, 1) : utcDay(y + shift, 12, 31);
    case 'quarter': {
      const firstMonth = Math.floor((m - 1) / 3) * 3 + 1 + shift * 3;
      return edge === 'first' ? utcDay(y, firstMonth, 1) : utcDay(y, firstMonth + 3, 0);
    }
    default: {
      const dow = now.getUTCDay();
      const offsetToStart = period === 'isoweek' ? (dow + 6) % 7 : dow;
      const start = d - offsetToStart + shift * 7;
      return edge === 'first' ? utcDay(y, m, start) : utcDay(y, m, start + 6);
    }
  }
}

/** The PHP forms: the state the words build, or undefined when a word is not one we know. */
function parseWords(text: string): ParseState | undefined {
  const state: ParseState = { unsetTime: false, rel: { y: 0, m: 0, d: 0, h: 0, i: 0, s: 0 } };
  let pos = 0;
  while (pos < text.length) {
    if (text[pos] === ' ') {
      pos += 1;
      continue;
    }
    let matched = false;
    for (const [re, apply] of RULES) {
      re.lastIndex = pos;
      const match = re.exec(text);
      if (match && match[0].length > 0) {
        if (!apply(match, state)) {
          return undefined;
        }
        pos += match[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) {
      return undefined;
    }
  }
  return state;
}

const NOT_UNDERSTOOD = { error: 'not-understood' } as const;
const OUT_OF_RANGE = { error: 'out-of-range' } as const;

/**
 * Evaluates a date expression relative to `now`: the UTC day it names when that day is between
 * FIRST_SUPPORTED_DAY and LAST_SUPPORTED_DAY, else whether it was not understood or out of range.
 */
export function evaluateDateExpression(input: string, now: Date): DateExpressionResult {
  const text = input.trim().toLowerCase().replace(/,/g, ' ').replace(/\s+/g, ' ');
  if (text.length === 0 || text.length > 100) {
    return NOT_UNDERSTOOD;
  }
  try {
    let day = parseSpecForm(text, now);
    if (day === undefined) {
      const state = parseWords(text);
      if (state === undefined) {
        return NOT_UNDERSTOOD;
      }
      if (state.overflow) {
        return OUT_OF_RANGE;
      }
      const f = evaluate(state, now);
      if (f.y < 0 || f.y > 9999) {
        return OUT_OF_RANGE;
      }
      day = formatDay(f);
    }
    return day < FIRST_SUPPORTED_DAY || day > LAST_SUPPORTED_DAY ? OUT_OF_RANGE : { day };
  } catch (error) {
    if (error instanceof OutOfRange) {
      return OUT_OF_RANGE;
    }
    throw error;
  }
}

/**
 * The UTC day a date expression names relative to `now`, or undefined when it is not understood
 * or out of the supported range (see `evaluateDateExpression` for which).
 */
export function parseDateExpression(input: string, now: Date): string | undefined {
  const result = evaluateDateExpression(input, now);
  return 'day' in result ? result.day : undefined;
}

/** Today's UTC day, `YYYY-MM-DD`. */
export function utcToday(now: Date): string {
  return formatDay(toFields(now));
}

/** Whole days from `start` to `end`, both `YYYY-MM-DD`. */
export function daysBetween(start: string, end: string): number {
  return (Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000;
}

/** The day one calendar year after `day` (29 February maps to 28 February). */
export function oneYearAfter(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  const lastOfMonth = new Date(Date.UTC(y + 1, m, 0)).getUTCDate();
  return formatDay({ y: y + 1, m, d: Math.min(d, lastOfMonth) });
}
