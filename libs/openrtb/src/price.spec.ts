import { describe, expect, it } from 'vitest';
import { MAX_BID_CPM_MICROS, cpmToMicros, microsToCpm } from './price';

describe('cpmToMicros', () => {
  it.each([
    [1.005, 1_005_000],
    [0.29, 290_000],
    [1.15, 1_150_000],
    [9.43, 9_430_000],
    [0.065445, 65_445],
    [1.028428, 1_028_428],
    [0.0000005, 1],
    [0.0000004, 0],
    [0.0000015, 2],
    [1.0000005, 1_000_001],
    [1e-7, 0],
    [5e-7, 1],
    [50, 50_000_000],
    [1000, MAX_BID_CPM_MICROS],
    [1e9, 1e15],
    [0, 0],
    [-1.005, -1_005_000],
  ])('converts %s USD to %s micro-USD exactly', (price, micros) => {
    expect(cpmToMicros(price)).toBe(micros);
  });

  it('is exact where a float multiplication is not', () => {
    expect(Math.floor(1.005 * 1e6)).toBe(1_004_999);
    expect(cpmToMicros(1.005)).toBe(1_005_000);
    // 0.0002445 * 1e6 is 244.49999999999997, which Math.round takes down.
    expect(Math.round(0.0002445 * 1e6)).toBe(244);
    expect(cpmToMicros(0.0002445)).toBe(245);
  });

  it('rounds every price as its shortest decimal form says, whatever its digits', () => {
    // The digits of the decimal form, rounded half away from zero: an oracle without floats.
    const oracle = (price: number): number => {
      const [mantissa, exponent = '0'] = String(Math.abs(price)).split('e');
      const [whole, fraction = ''] = mantissa.split('.');
      const digits = `${whole}${fraction}`;
      const point = whole.length + Number(exponent) + 6;
      const kept = point <= 0 ? 0n : BigInt(digits.slice(0, point).padEnd(point, '0'));
      const up = point >= 0 && Number(digits[point] ?? '0') >= 5 ? 1n : 0n;
      return Number(kept + up) * (price < 0 ? -1 : 1);
    };
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20_000; i += 1) {
      const decimals = 1 + Math.floor(random() * 10);
      const price = Number((random() * 10 ** (1 + Math.floor(random() * 4))).toFixed(decimals));
      expect([price, cpmToMicros(price)]).toEqual([price, oracle(price)]);
    }
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 1e10, 1e21])('refuses %s', (price) => {
    expect(() => cpmToMicros(price)).toThrow(RangeError);
  });
});

describe('microsToCpm', () => {
  it.each([
    [1_500_000, '1.5'],
    [10_000, '0.01'],
    [1, '0.000001'],
    [0, '0'],
    [2_000_000, '2'],
    [1_005_000, '1.005'],
    [-250_000, '-0.25'],
    [MAX_BID_CPM_MICROS, '1000'],
  ])('writes %s micro-USD as "%s"', (micros, text) => {
    expect(microsToCpm(micros)).toBe(text);
  });

  it('round-trips through cpmToMicros', () => {
    for (const micros of [1, 7, 99_999, 1_000_001, 123_456_789, MAX_BID_CPM_MICROS]) {
      expect(cpmToMicros(Number(microsToCpm(micros)))).toBe(micros);
    }
  });

  it.each([1.5, Number.NaN, 2 ** 53])('refuses %s', (micros) => {
    expect(() => microsToCpm(micros)).toThrow(RangeError);
  });
});
