import { describe, expect, it } from 'vitest';
import {
  FIRST_SUPPORTED_DAY,
  LAST_SUPPORTED_DAY,
  daysBetween,
  evaluateDateExpression,
  oneYearAfter,
  parseDateExpression,
  utcToday,
} from './relative-date.parser';

// Sunday 22 November 2026, 10:30 UTC.
const NOW = new Date('2026-11-22T10:30:00Z');

describe('parseDateExpression: the specification form', () => {
  const cases: [string, string][] = [
    ['first day of this week', '2026-11-22'],
    ['last day of this week', '2026-11-28'],
    ['first day of last week', '2026-11-15'],
    ['last day of previous week', '2026-11-21'],
    ['first day of next week', '2026-11-29'],
    ['first day of this isoweek', '2026-11-16'],
    ['last day of this isoweek', '2026-11-22'],
    ['first day of last isoweek', '2026-11-09'],
    ['first day of this quarter', '2026-10-01'],
    ['last day of this quarter', '2026-12-31'],
    ['first day of last quarter', '2026-07-01'],
    ['last day of previous quarter', '2026-09-30'],
    ['first day of next quarter', '2027-01-01'],
    ['first day of this year', '2026-01-01'],
    ['last day of last year', '2025-12-31'],
    ['first day of next year', '2027-01-01'],
    ['  First Day Of  Last  Year ', '2025-01-01'],
  ];
  for (const [expression, day] of cases) {
    it(`${expression} -> ${day}`, () => expect(parseDateExpression(expression, NOW)).toBe(day));
  }

  it('crosses year boundaries for quarters', () => {
    expect(parseDateExpression('first day of last quarter', new Date('2026-02-10T00:00:00Z'))).toBe(
      '2025-10-01',
    );
    expect(parseDateExpression('last day of last quarter', new Date('2026-02-10T00:00:00Z'))).toBe(
      '2025-12-31',
    );
  });
});

describe('parseDateExpression: what it refuses', () => {
  for (const bad of [
    '',
    '   ',
    'soon',
    '2026-13-01',
    '2026-02-30',
    '2026-1-1',
    'next blue moon',
    '1 day ago ago ago x',
    'x'.repeat(101),
    "'; DROP TABLE x; --",
  ]) {
    it(`refuses ${JSON.stringify(bad.slice(0, 30))}`, () =>
      expect(parseDateExpression(bad, NOW)).toBeUndefined());
  }
});

describe('day arithmetic', () => {
  it('knows today in UTC whatever the hour', () => {
    expect(utcToday(new Date('2026-11-22T23:59:59Z'))).toBe('2026-11-22');
  });
  it('counts days between two dates', () => {
    expect(daysBetween('2026-02-27', '2026-03-01')).toBe(2);
    expect(daysBetween('2026-03-01', '2026-02-27')).toBe(-2);
  });
  it('adds one calendar year, 29 February landing on 28 February', () => {
    expect(oneYearAfter('2025-11-22')).toBe('2026-11-22');
    expect(oneYearAfter('2024-02-29')).toBe('2025-02-28');
  });
});

const OUT_OF_RANGE = { error: 'out-of-range' };
const NOT_UNDERSTOOD = { error: 'not-understood' };

/** Every unit word the parser knows, with its length in seconds (months and years have none). */
const UNITS: readonly [string, number | 'month' | 'year'][] = [
  ...(['sec', 'secs', 'second', 'seconds'] as const).map((u) => [u, 1] as [string, number]),
  ...(['min', 'mins', 'minute', 'minutes'] as const).map((u) => [u, 60] as [string, number]),
  ...(['hour', 'hours'] as const).map((u) => [u, 3_600] as [string, number]),
  ...(['day', 'days'] as const).map((u) => [u, 86_400] as [string, number]),
  ...(['week', 'weeks'] as const).map((u) => [u, 7 * 86_400] as [string, number]),
  ...(['fortnight', 'fortnights', 'forthnight'] as const).map((u) => [u, 14 * 86_400] as [string, number]),
  ['month', 'month'],
  ['months', 'month'],
  ['year', 'year'],
  ['years', 'year'],
];

/** The day `amount` units from NOW, by JavaScript's Date (an independent computation). */
function dayAfter(unit: number | 'month' | 'year', amount: number): string {
  const date =
    unit === 'month'
      ? Date.UTC(2026, 10 + amount, 22, 10, 30)
      : unit === 'year'
        ? Date.UTC(2026 + amount, 10, 22, 10, 30)
        : NOW.getTime() + amount * unit * 1000;
  return new Date(date).toISOString().slice(0, 10);
}

/** How many whole units fit between NOW and a moment: the largest offset that stays on its side. */
function unitsTo(unit: number | 'month' | 'year', moment: string): number {
  if (unit === 'month' || unit === 'year') {
    // NOW is the 22nd at 10:30: a whole month from it lands on the 22nd, inside every month.
    const [y, m] = moment.split('-').map(Number);
    const months = (y - 2026) * 12 + (m - 11);
    const whole = moment.slice(8, 10) >= '22' || months < 0 ? months : months - 1;
    const inside = months < 0 && moment.slice(8, 10) > '22' ? whole + 1 : whole;
    return unit === 'month' ? inside : Math.trunc(inside / 12);
  }
  return Math.trunc((Date.parse(moment) - NOW.getTime()) / 1000 / unit);
}

describe('evaluateDateExpression: the supported range', () => {
  it(`is ${FIRST_SUPPORTED_DAY} to ${LAST_SUPPORTED_DAY}, absolute dates included`, () => {
    expect(evaluateDateExpression('1970-01-01', NOW)).toEqual({ day: '1970-01-01' });
    expect(evaluateDateExpression('2105-12-31', NOW)).toEqual({ day: '2105-12-31' });
    expect(evaluateDateExpression('12/31/2105', NOW)).toEqual({ day: '2105-12-31' });
    for (const outside of [
      '1969-12-31',
      '2106-01-01',
      '0001-01-01',
      '0050-06-15',
      '9999-12-31',
      'jan 1 1969',
    ]) {
      expect(evaluateDateExpression(outside, NOW), outside).toEqual(OUT_OF_RANGE);
      expect(parseDateExpression(outside, NOW), outside).toBeUndefined();
    }
  });

  it('still refuses impossible calendar dates as not understood, whatever their year', () => {
    expect(evaluateDateExpression('2026-02-30', NOW)).toEqual(NOT_UNDERSTOOD);
    expect(evaluateDateExpression('0050-02-30', NOW)).toEqual(NOT_UNDERSTOOD);
    expect(evaluateDateExpression('1900-02-29', NOW)).toEqual(NOT_UNDERSTOOD);
    expect(evaluateDateExpression('2000-02-29', NOW)).toEqual({ day: '2000-02-29' });
  });

  for (const [word, unit] of UNITS) {
    it(`${word}: the offsets that reach each end of the range, and one more`, () => {
      const back = unitsTo(unit, `${FIRST_SUPPORTED_DAY}T00:00:00Z`);
      const ahead = unitsTo(unit, `${LAST_SUPPORTED_DAY}T23:59:59Z`);
      expect(back).toBeLessThan(0);
      expect(ahead).toBeGreaterThan(0);
      const first = dayAfter(unit, back);
      const last = dayAfter(unit, ahead);
      // The offsets land inside the range, one more unit outside it (checked with Date as well).
      expect(first >= FIRST_SUPPORTED_DAY && last <= LAST_SUPPORTED_DAY).toBe(true);
      expect(dayAfter(unit, back - 1) < FIRST_SUPPORTED_DAY).toBe(true);
      expect(dayAfter(unit, ahead + 1) > LAST_SUPPORTED_DAY).toBe(true);

      expect(evaluateDateExpression(`${back} ${word}`, NOW)).toEqual({ day: first });
      expect(evaluateDateExpression(`${-back} ${word} ago`, NOW)).toEqual({ day: first });
      expect(evaluateDateExpression(`${back - 1} ${word}`, NOW)).toEqual(OUT_OF_RANGE);
      expect(evaluateDateExpression(`${1 - back} ${word} ago`, NOW)).toEqual(OUT_OF_RANGE);
      expect(evaluateDateExpression(`+${ahead} ${word}`, NOW)).toEqual({ day: last });
      expect(evaluateDateExpression(`${ahead + 1} ${word}`, NOW)).toEqual(OUT_OF_RANGE);
      expect(evaluateDateExpression(`-${ahead + 1} ${word} ago`, NOW)).toEqual(OUT_OF_RANGE);
    });

    it(`${word}: small offsets either way agree with Date`, () => {
      for (const amount of [-3, -1, 0, 1, 2, 40]) {
        const sign = amount < 0 ? '-' : '+';
        expect(evaluateDateExpression(`${sign}${Math.abs(amount)} ${word}`, NOW), `${amount}`).toEqual({
          day: dayAfter(unit, amount),
        });
      }
    });

    it(`${word}: huge offsets either way are out of range, never an invalid day`, () => {
      // Beyond 2^53 - 1: refused in every form. Below it but far: out of range in every form that
      // keeps the offset; `first/last day of` drops day offsets (as PHP does), so those stay in range.
      const beyond = ['9007199254740992', '9007199254740993', '9223372036854775808', '9'.repeat(60)];
      const far = ['99999999999', '9007199254740991'];
      const dropsDays = typeof unit === 'number' && unit >= 86_400;
      for (const amount of [...beyond, ...far]) {
        for (const expression of [
          `-${amount} ${word}`,
          `+${amount} ${word}`,
          `${amount} ${word}`,
          `${amount} ${word} ago`,
          `-${amount} ${word} ago`,
          `yesterday -${amount} ${word}`,
          `monday -${amount} ${word}`,
          `first day of -${amount} ${word}`,
          `last day of +${amount} ${word}`,
        ]) {
          // (Weeks and fortnights are counted in days: 2^53 - 1 weeks is beyond 2^53 - 1 days.)
          const inDays = Number(amount) * ((unit as number) / 86_400);
          const kept = !(dropsDays && Number.isSafeInteger(inDays) && expression.includes(' day of '));
          expect(evaluateDateExpression(expression, NOW), expression).toEqual(
            kept ? OUT_OF_RANGE : { day: expression.startsWith('first') ? '2026-11-01' : '2026-11-30' },
          );
        }
      }
    });
  }

  it('refuses the fuzzed expressions of issue 22 as out of range', () => {
    expect(evaluateDateExpression('-9007199254740993 seconds', NOW)).toEqual(OUT_OF_RANGE);
    expect(evaluateDateExpression('-99999999999 years', NOW)).toEqual(OUT_OF_RANGE);
  });

  it('computes offsets that cancel exactly, while each is a safe integer', () => {
    expect(evaluateDateExpression('+9007199254740991 seconds -9007199254740990 seconds', NOW)).toEqual({
      day: '2026-11-22',
    });
    expect(evaluateDateExpression('+1000000 years -12000000 months -1 day', NOW)).toEqual({
      day: '2026-11-21',
    });
    // An intermediate beyond 2^53 - 1 of its unit is refused rather than rounded.
    expect(evaluateDateExpression('+9007199254740991 seconds +1 second -2 seconds', NOW)).toEqual(
      OUT_OF_RANGE,
    );
  });

  it('says not understood before out of range when an expression has both', () => {
    expect(evaluateDateExpression('99999999999999999999 days xyz', NOW)).toEqual(NOT_UNDERSTOOD);
  });

  it('answers every generated expression with a real day in range or an error', () => {
    // A small seeded generator (xorshift32): relative words, signs, units and amounts of any size.
    let x = 0x2026_1122;
    const next = () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 2 ** 32;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
    const words = [
      'yesterday',
      'today',
      'monday',
      'last week',
      'first day of',
      'last day of',
      'ago',
      'next month',
    ];
    let days = 0;
    for (let n = 0; n < 3_000; n += 1) {
      const parts: string[] = [];
      for (let k = 1 + Math.floor(next() * 4); k > 0; k -= 1) {
        if (next() < 0.3) {
          parts.push(pick(words));
        } else {
          const digits = 1 + Math.floor(next() * (next() < 0.5 ? 6 : 22));
          const amount = Array.from({ length: digits }, () => Math.floor(next() * 10)).join('');
          parts.push(`${pick(['', '+', '-'])}${amount} ${pick(UNITS)[0]}`);
        }
      }
      const expression = parts.join(' ');
      const result = evaluateDateExpression(expression, NOW);
      if ('day' in result) {
        days += 1;
        expect(result.day >= FIRST_SUPPORTED_DAY && result.day <= LAST_SUPPORTED_DAY, expression).toBe(true);
        expect(new Date(`${result.day}T00:00:00Z`).toISOString().slice(0, 10), expression).toBe(result.day);
      } else {
        expect([NOT_UNDERSTOOD, OUT_OF_RANGE], expression).toContainEqual(result);
      }
    }
    // The generator reaches both sides: days in range and refusals.
    expect(days).toBeGreaterThan(300);
    expect(days).toBeLessThan(2_900);
  });
});
