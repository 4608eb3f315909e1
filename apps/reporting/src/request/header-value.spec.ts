import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { percentEncode, removedColumnsHeader } from './header-value';

describe('percentEncode', () => {
  it.each([
    ['clicks', 'clicks'],
    ['net_cpm', 'net_cpm'],
    ['a-b.c~d', 'a-b.c~d'],
    ['two words', 'two%20words'],
    ['a,b', 'a%2Cb'],
    ['100%', '100%25'],
    ['x\r\nSet-Cookie: y=1', 'x%0D%0ASet-Cookie%3A%20y%3D1'],
    ['\u0000\u0007\u007f', '%00%07%7F'],
    ['café', 'caf%C3%A9'],
    ['😀', '%F0%9F%98%80'],
    ['\uD800', '%EF%BF%BD'],
    ['a\uDC00b\uD83D\uDE00', 'a%EF%BF%BDb%F0%9F%98%80'],
    ["(it's)*!", "(it's)*!"],
    ['', ''],
  ])('%j -> %s', (text, encoded) => expect(percentEncode(text)).toBe(encoded));

  it('round-trips any well-formed text through decodeURIComponent and is always a valid header value', () => {
    const samples = [
      'clicks',
      'ünïcödé',
      '🎉,🎊',
      '\t\r\n\u0000\u001f\u007f\u0080\u00ff',
      'a%2Cb',
      'é'.repeat(300),
    ];
    for (const text of samples) {
      const encoded = percentEncode(text);
      expect(decodeURIComponent(encoded)).toBe(text);
      expect(encoded).toMatch(/^[\x21-\x7e]*$/);
      expect(() => validateHeaderValue('X-Test', encoded)).not.toThrow();
    }
  });
});

describe('removedColumnsHeader', () => {
  it('joins the encoded names with commas, so that splitting on commas gives them back', () => {
    const names = ['weather', 'a,b', 'line\nbreak', '😀'];
    const header = removedColumnsHeader(names);
    expect(header).toBe('weather,a%2Cb,line%0Abreak,%F0%9F%98%80');
    expect(header.split(',').map(decodeURIComponent)).toEqual(names);
  });
});
