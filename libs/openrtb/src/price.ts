/** Micro-USD per USD: the exchange keeps every amount as an integer of micro-USD. */
export const MICROS_PER_USD = 1_000_000;

/**
 * The highest CPM a DSP may bid, 1,000 USD. Email inventory sells for a few dollars; a price
 * above this is a DSP bug (a price in cents or micros, say), never a real bid.
 */
export const MAX_BID_CPM_MICROS = 1_000 * MICROS_PER_USD;

/**
 * A CPM in USD, as a JSON float, to integer micro-USD, rounded half away from zero. The rounding
 * works on the number's shortest decimal form, which is what the DSP wrote: 1.005 * 1e6 is
 * 1004999.9999999999 in binary floating point, but 1.005 USD is exactly 1,005,000 micro-USD.
 * Throws a RangeError for a non-finite price or one whose micros are not a safe integer.
 */
export function cpmToMicros(price: number): number {
  if (!Number.isFinite(price)) {
    throw new RangeError(`not a finite price: ${price}`);
  }
  // Within a thousandth of a micro of an integer: the decimal form's digits past the sixth are
  // all 0 or all 9, and rounding the product gives what the digit walk below gives, without strings.
  const product = price * MICROS_PER_USD;
  const rounded = Math.round(Math.abs(product));
  if (Number.isSafeInteger(rounded) && Math.abs(Math.abs(product) - rounded) < 1e-3) {
    return price < 0 ? -rounded : rounded;
  }
  // String() gives the shortest form that reads back as the same number, e.g. "1.005", "5e-7".
  const [mantissa, exponent = '0'] = String(Math.abs(price)).split('e');
  const [whole, fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  // Where the decimal point falls in `digits` once the value is in micros.
  const point = whole.length + Number(exponent) + 6;
  const kept = point <= 0 ? '0' : digits.slice(0, point).padEnd(point, '0');
  const firstDropped = point < 0 ? 0 : Number(digits[point] ?? '0');
  const micros = Number(kept) + (firstDropped >= 5 ? 1 : 0);
  if (!Number.isSafeInteger(micros)) {
    throw new RangeError(`price out of range: ${price}`);
  }
  return price < 0 ? -micros : micros;
}

/** Integer micro-USD to the shortest decimal string of USD: 1500000 is "1.5", 10000 is "0.01". */
export function microsToCpm(micros: number): string {
  if (!Number.isSafeInteger(micros)) {
    throw new RangeError(`not an integer of micros: ${micros}`);
  }
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction ? `${sign}${whole}.${fraction}` : `${sign}${whole}`;
}
