import { describe, expect, it } from 'vitest';
import { ReportStoreErrorCode } from './report-store.exception';
import { exactNumber } from './exact-number';

describe('exactNumber', () => {
  it.each([
    ['0', 0],
    ['9007199254740991', 9_007_199_254_740_991],
    [9_007_199_254_740_991n, 9_007_199_254_740_991],
    [42, 42],
    [null, 0],
  ])('reads %s exactly', (value, expected) => {
    expect(exactNumber(value)).toBe(expected);
  });

  it.each(['9007199254740992', '18446744073709551615', 9_007_199_254_740_993n, '1.5'])(
    'refuses %s rather than round it',
    (value) => {
      expect(() => exactNumber(value)).toThrow(
        expect.objectContaining({ code: ReportStoreErrorCode.Failed }),
      );
    },
  );
});
