import { describe, expect, it } from 'vitest';
import { fnv1a32 } from './fnv1a';

describe('fnv1a32', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('hashes %j as the reference FNV-1a 32 does', (text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });
});
