import { describe, expect, it } from 'vitest';
import { ReportCode } from '@app/report-model';
import { httpStatusOf } from './reporting-exception.filter';

/**
 * Reporting part 7's table (docs/specification-notes.md#reporting-part-7), and docs/reporting-api.md's
 * statuses for the codes it leaves open.
 */
const EXPECTED: [number[], number][] = [
  [[10, 11, 20, 21, 22, 30, 31, 52], 401],
  [[40, 41, 42, 43, 44, 900, 901, 902, 903, 1005], 403],
  [[51], 429],
  [[53], 500],
  [[1000], 400],
  [[1001], 404],
  [[200, 201, 300], 200],
  [[701], 503],
  [[702], 504],
];

describe('httpStatusOf', () => {
  it('maps every result code as part 7 says', () => {
    const all = Object.values(ReportCode).filter((v): v is number => typeof v === 'number');
    const covered = EXPECTED.flatMap(([codes]) => codes);
    expect([...all].sort((a, b) => a - b)).toEqual([...covered].sort((a, b) => a - b));
    for (const [codes, status] of EXPECTED) {
      for (const code of codes) {
        expect(httpStatusOf(code as ReportCode), String(code)).toBe(status);
      }
    }
  });
});
