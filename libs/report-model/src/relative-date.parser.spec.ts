import { describe, expect, it } from 'vitest';
import { daysBetween, oneYearAfter, parseDateExpression, utcToday } from './relative-date.parser';

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
