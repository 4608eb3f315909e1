/**
 * Date expressions of the reporting API (part 4.1): `YYYY-MM-DD`, the spec's own
 * `[first/last] day of [this/last/previous/next] [week/isoweek/quarter/year]`, and the relative
 * forms of PHP's `strtotime` that analysts use, evaluated as PHP's timelib does (checked against
 * real PHP in test/contract/relative-date.oracle.test.ts). All arithmetic is in UTC.
 */

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

function addUnit(rel: Fields, unit: string, amount: number): void {
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
}

function validCalendarDate(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
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
    addUnit(st.rel, m[2], RELATIVE_TEXT[m[1]].amount);
    return true;
  }),
  rule(`([+-]?)\\s*(\\d+)\\s*(${UNIT_RE})`, (m, st) => {
    addUnit(st.rel, m[3], (m[1] === '-' ? -1 : 1) * Number(m[2]));
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

function normalize(f: Fields): Fields {
  return toFields(new Date(Date.UTC(f.y, f.m - 1, f.d, f.h, f.i, f.s)));
}

function dayOfWeek(f: Fields): number {
  return new Date(Date.UTC(f.y, f.m - 1, f.d)).getUTCDay();
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
  return formatDay(toFields(new Date(Date.UTC(y, m - 1, d))));
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

/**
 * Evaluates a date expression relative to `now` and returns the UTC day it names, or undefined
 * when the expression is not one we understand.
 */
export function parseDateExpression(input: string, now: Date): string | undefined {
  const text = input.trim().toLowerCase().replace(/,/g, ' ').replace(/\s+/g, ' ');
  if (text.length === 0 || text.length > 100) {
    return undefined;
  }
  const spec = parseSpecForm(text, now);
  if (spec !== undefined) {
    return spec;
  }

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
  return formatDay(evaluate(state, now));
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
