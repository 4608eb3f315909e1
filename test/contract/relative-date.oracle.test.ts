import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseDateExpression } from '@app/report-model';
import { requireOrSkip } from '@app/testing';

/**
 * Our date expressions against real PHP: the same expressions, the same fixed "now", the same
 * answer. The nows cover a Sunday, a Monday late at night, a month end and a leap day.
 */
const NOWS = [
  '2026-11-22T10:30:00Z',
  '2026-11-23T23:10:00Z',
  '2026-11-25T10:30:00Z',
  '2026-03-31T12:00:00Z',
  '2024-02-29T00:00:00Z',
  '2026-01-01T00:30:00Z',
];

const EXPRESSIONS = [
  'today',
  'yesterday',
  'tomorrow',
  'now',
  'midnight',
  'noon',
  'yesterday noon',
  '  Today ',
  '-1 day',
  '-7 days',
  '-1day',
  '+1 days ago',
  '1 day ago',
  '2 days ago',
  '3 weeks ago',
  '1 fortnight ago',
  '-30 hours',
  '+36 hours',
  '-48 hours',
  '2 days 3 hours ago',
  '-1 year -2 months',
  '1 year ago',
  '-1 week',
  '+1 day +1 week',
  '+1 week 2 days',
  'today+1day',
  'yesterday -1 week',
  'yesterday 3 days ago',
  '-1 month',
  '+1 month',
  'last month',
  'next month',
  'this month',
  'previous month',
  'last year',
  'next year',
  'last week',
  'next week',
  'this week',
  'monday next week',
  'mon next week',
  'sunday this week',
  'sunday last week',
  'monday last week',
  'tuesday last week',
  'friday this week',
  '-1 week monday',
  'last monday',
  'Last Monday',
  'next monday',
  'this monday',
  'monday',
  'last sunday',
  'next sunday',
  'saturday',
  'sun',
  'wed',
  'last friday',
  'next friday',
  'this friday',
  'first day of last month',
  'last day of last month',
  'first day of this month',
  'last day of this month',
  'first day of next month',
  'last day of next month',
  'last day of previous month',
  'first day of',
  'last day of',
  'first day of -1 month',
  'last day of -2 months',
  'last day of february',
  'first day of january 2026',
  'february',
  'february 2025',
  'march 5',
  '5 march 2025',
  'March 5, 2025',
  'dec 25 2025',
  '25 dec 2025',
  '2026-01-05',
  '01/05/2026',
  '12/31/2025',
];

function phpDates(nows: readonly string[], expressions: readonly string[]): string[] {
  const script = `date_default_timezone_set('UTC');
$nows = json_decode($argv[1]); $exprs = json_decode($argv[2]);
foreach ($nows as $n) { $t = strtotime($n); foreach ($exprs as $e) { $r = strtotime($e, $t); echo $r === false ? 'FALSE' : date('Y-m-d', $r), "\\n"; } }`;
  return execFileSync('php', ['-r', script, JSON.stringify(nows), JSON.stringify(expressions)])
    .toString()
    .trim()
    .split('\n');
}

function phpAvailable(): boolean {
  try {
    execFileSync('php', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.runIf(requireOrSkip(phpAvailable(), 'php-cli (the strtotime oracle)'))(
  'date expressions against PHP strtotime',
  () => {
    const answers = phpDates(NOWS, EXPRESSIONS);

    NOWS.forEach((now, n) => {
      it(`agrees with PHP for ${EXPRESSIONS.length} expressions at ${now}`, () => {
        const ours = EXPRESSIONS.map((e) => `${e} => ${parseDateExpression(e, new Date(now)) ?? 'FALSE'}`);
        const theirs = EXPRESSIONS.map((e, i) => `${e} => ${answers[n * EXPRESSIONS.length + i]}`);
        expect(ours).toEqual(theirs);
      });
    });

    it('differs from PHP on purpose for the spec form, which PHP reads as a month', () => {
      const now = new Date(NOWS[0]);
      const [php] = phpDates([NOWS[0]], ['first day of next year']);
      expect(php).toBe('2027-11-01');
      expect(parseDateExpression('first day of next year', now)).toBe('2027-01-01');
    });

    it('differs from PHP on purpose for impossible calendar dates, which PHP rolls over', () => {
      const [php] = phpDates([NOWS[0]], ['2025-02-30']);
      expect(php).toBe('2025-03-02');
      expect(parseDateExpression('2025-02-30', new Date(NOWS[0]))).toBeUndefined();
    });
  },
);
