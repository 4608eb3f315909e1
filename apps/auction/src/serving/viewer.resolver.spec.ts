import { describe, expect, it } from 'vitest';
import { cookieValue, userCookie } from './viewer.resolver';

describe('cookieValue', () => {
  it.each([
    ['a, b', 'a=1; exchange_uuid=abc; b=2', 'abc'],
    ['spaces', '  exchange_uuid = abc ', 'abc'],
    ['absent', 'a=1; b=2', undefined],
    ['a name that only ends the same', 'my_exchange_uuid=abc', undefined],
    ['no header', undefined, undefined],
    ['garbage', ';;;===;;exchange_uuid', undefined],
    ['an oversized header', `exchange_uuid=${'a'.repeat(9000)}`, undefined],
  ])('%s', (_name, header, expected) => {
    expect(cookieValue(header, 'exchange_uuid')).toBe(expected);
  });
});

describe('userCookie', () => {
  it('is HttpOnly and a year long, SameSite=None and Secure over HTTPS', () => {
    expect(userCookie('id-1', true)).toBe(
      'exchange_uuid=id-1; Max-Age=31536000; Path=/; HttpOnly; SameSite=None; Secure',
    );
  });

  it('is SameSite=Lax over plain HTTP, where browsers refuse SameSite=None without Secure', () => {
    expect(userCookie('id-1', false)).toMatch(/; SameSite=Lax$/);
  });
});
