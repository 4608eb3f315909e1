/** Small helpers for reading untrusted JSON (bid responses, native markup); not exported from the library. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A field of a parsed object, own properties only; `null` counts as absent, since many DSP
 * serialisers write it for a field they leave out. An own `__proto__` key (JSON.parse makes one)
 * is an ordinary field nobody reads, and inherited properties are never fields.
 */
export function field(object: JsonObject, name: string): unknown {
  if (!Object.hasOwn(object, name)) {
    return undefined;
  }
  const value = object[name];
  return value === null ? undefined : value;
}

/** A short account of a value for a detail message; never the whole of a hostile value. */
export function preview(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  if (value === undefined) {
    return 'missing';
  }
  if (value === null) {
    return 'null';
  }
  return Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value;
}

export const isWholeNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

export const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Unicode code points: an emoji is one, as readers count, not the two UTF-16 units of `length`. */
export function codePointLength(text: string): number {
  let count = 0;
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  for (const _ of text) {
    count += 1;
  }
  return count;
}
