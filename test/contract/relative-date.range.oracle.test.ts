import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FIRST_SUPPORTED_DAY, LAST_SUPPORTED_DAY, evaluateDateExpression } from '@app/report-model';
import { requireOrSkip } from '@app/testing';

/**
 * Large relative offsets in every unit against real PHP: where PHP names a day inside the supported
 * range, ours is the same day; where PHP's day is outside it, ours is refused as out of range. The
 * amounts stay below 2^53 seconds' worth, where PHP's own 64-bit arithmetic does not wrap (beyond
 * it PHP names days at random; relative-date.parser.spec.ts covers those).
 */
const NOWS = ['2026-11-22T10:30:00Z', '2024-02-29T23:59:59Z', '1970-01-01T00:00:00Z', '2105-12-31T12:00:00Z'];

const UNITS = [
  'sec',
  'seconds',
  'min',
  'minutes',
  'hour',
  'hours',
  'day',
  'days',
  'week',
  'weeks',
  'fortnight',
  'forthnight',
  'month',
  'months',
  'year',
  'years',
];

/** From a few units to millions of years, either way, with the boundaries of each unit near. */
const AMOUNTS = [
  1, 59, 61, 1_000, 20_779, 20_780, 49_369, 49_370, 86_399, 86_401, 1_000_000, 29_921_400, 1_793_183_400,
  1_793_183_401, 4_291_150_000, 99_999_999_999,
];

const EXPRESSIONS = UNITS.flatMap((unit) =>
  AMOUNTS.flatMap((amount) => [
    `-${amount} ${unit}`,
    `+${amount} ${unit}`,
    `${amount} ${unit} ago`,
    `yesterday -${amount} ${unit}`,
    `first day of -${amount} ${unit}`,
    `last day of +${amount} ${unit}`,
    `monday +${amount} ${unit}`,
  ]),
);

function phpDates(nows: readonly string[], expressions: readonly string[]): string[] {
  const script = `date_default_timezone_set('UTC');
$nows = json_decode($argv[1]); $exprs = json_decode($argv[2]);
foreach ($nows as $n) { $t = strtotime($n); foreach ($exprs as $e) { $r = strtotime($e, $t); echo $r === false ? 'FALSE' : date('Y-m-d', $r), "\\n"; } }`;
  return execFileSync('php', ['-r', script, JSON.stringify(nows), JSON.stringify(expressions)], {
    maxBuffer: 64 * 1024 * 1024,
  })
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

/** Whether PHP's `date('Y-m-d')` names a day of the supported range (a year of 4 digits, compared as text). */
const inRange = (day: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(day) && day >= FIRST_SUPPORTED_DAY && day <= LAST_SUPPORTED_DAY;

describe.runIf(requireOrSkip(phpAvailable(), 'php-cli (the strtotime oracle)'))(
  'large relative offsets against PHP strtotime',
  () => {
    const answers = phpDates(NOWS, EXPRESSIONS);

    NOWS.forEach((now, n) => {
      it(`agrees with PHP on ${EXPRESSIONS.length} expressions at ${now}, or refuses a day out of range`, () => {
        const ours: string[] = [];
        const expected: string[] = [];
        let both = 0;
        EXPRESSIONS.forEach((expression, i) => {
          const php = answers[n * EXPRESSIONS.length + i];
          const result = evaluateDateExpression(expression, new Date(now));
          ours.push(`${expression} => ${'day' in result ? result.day : result.error}`);
          expected.push(`${expression} => ${inRange(php) ? php : 'out-of-range'}`);
          both += inRange(php) ? 1 : 0;
        });
        expect(ours).toEqual(expected);
        // Both sides of the range are exercised at every now.
        expect(both).toBeGreaterThan(EXPRESSIONS.length / 5);
        expect(both).toBeLessThan(EXPRESSIONS.length);
      });
    });
  },
);
