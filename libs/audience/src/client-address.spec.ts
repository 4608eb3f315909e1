import { describe, expect, it } from 'vitest';
import { clientAddress, unmapIpv4 } from './client-address';

describe('clientAddress', () => {
  it.each([
    ['the socket peer with no trusted hop', '203.0.113.9', '198.51.100.1', 0, '203.0.113.9'],
    ['the socket peer, unmapped', '::ffff:203.0.113.9', undefined, 0, '203.0.113.9'],
    ['the rightmost entry behind one proxy', '10.0.0.2', '198.51.100.1', 1, '198.51.100.1'],
    [
      'the entry its proxy wrote, not the forged ones',
      '10.0.0.2',
      '1.1.1.1, 8.8.8.8, 198.51.100.1',
      1,
      '198.51.100.1',
    ],
    [
      'the second from the right behind two proxies',
      '10.0.0.3',
      '1.1.1.1,198.51.100.1, 10.0.0.2',
      2,
      '198.51.100.1',
    ],
    ['an IPv6 entry', '10.0.0.2', '2001:db8::1', 1, '2001:db8::1'],
    ['a mapped entry, unmapped', '10.0.0.2', '::ffff:198.51.100.1', 1, '198.51.100.1'],
    ['the peer when the header is absent', '10.0.0.2', undefined, 1, '10.0.0.2'],
    ['the peer when the entry is garbage', '10.0.0.2', '198.51.100.1, <script>', 1, '10.0.0.2'],
    ['the peer when the entry is a host name', '10.0.0.2', 'evil.example', 1, '10.0.0.2'],
    ['the peer when the entry has a port', '10.0.0.2', '198.51.100.1:443', 1, '10.0.0.2'],
    ['the peer when the entry is empty', '10.0.0.2', '198.51.100.1, ', 1, '10.0.0.2'],
    ['the peer when there are fewer entries than hops', '10.0.0.3', '198.51.100.1', 2, '10.0.0.3'],
    ['the peer when the only entry is empty', '10.0.0.3', ',', 2, '10.0.0.3'],
    ['empty with no socket address', undefined, undefined, 0, ''],
  ])('gives %s', (_name, remote, forwardedFor, hops, expected) => {
    expect(clientAddress(remote, forwardedFor, hops)).toBe(expected);
  });

  it('reads only the trusted end of a long forged header', () => {
    const forged = Array.from({ length: 5_000 }, (_, i) => `1.2.${i % 256}.${i % 200}`).join(', ');
    expect(clientAddress('10.0.0.2', `${forged}, 198.51.100.1`, 1)).toBe('198.51.100.1');
  });
});

describe('unmapIpv4', () => {
  it.each([
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:192.0.2.1', '192.0.2.1'],
    ['::ffff:999.0.2.1', '::ffff:999.0.2.1'],
    ['2001:db8::1', '2001:db8::1'],
    ['192.0.2.1', '192.0.2.1'],
  ])('turns %s into %s', (input, expected) => {
    expect(unmapIpv4(input)).toBe(expected);
  });
});
