import { beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_GEO, GeoResolver } from './geo.resolver';

describe('GeoResolver', () => {
  let geo: GeoResolver;

  beforeAll(async () => {
    geo = await GeoResolver.open();
  });

  it.each([
    ['8.8.8.8', 'US', 'California'],
    ['81.2.69.142', 'GB', 'England'],
    ['::ffff:8.8.8.8', 'US', 'California'],
  ])('places %s in %s, %s', (ip, country, region) => {
    expect(geo.lookup(ip)).toEqual({ country, region, metro: '', zip: '' });
  });

  it('places an IPv6 address', () => {
    const { country, region, metro } = geo.lookup('2001:4860:4860::8888');
    expect(country).toMatch(/^[A-Z]{2}$/);
    expect(region).not.toBe('');
    expect(metro).toBe('');
  });

  it.each([
    ['a private IPv4 address', '10.1.2.3'],
    ['a private IPv4 address', '192.168.0.1'],
    ['a shared-address-space address', '100.64.0.1'],
    ['IPv4 loopback', '127.0.0.1'],
    ['IPv6 loopback', '::1'],
    ['a unique-local IPv6 address', 'fd00::1'],
    ['a link-local IPv6 address', 'fe80::1'],
    ['a documentation address', '2001:db8::1'],
    ['an out-of-range octet', '256.1.1.1'],
    ['a host name', 'example.com'],
    ['an address with a port', '8.8.8.8:53'],
    ['an empty string', ''],
    ['a very long string', '1'.repeat(10_000)],
  ])('has nothing for %s (%s)', (_name, ip) => {
    expect(geo.lookup(ip)).toEqual(EMPTY_GEO);
  });

  it('answers a burst of lookups', () => {
    const ips = Array.from(
      { length: 10_000 },
      (_, i) => `${1 + (i % 223)}.${(i * 7) % 256}.${(i * 13) % 256}.1`,
    );
    const countries = ips.map((ip) => geo.lookup(ip).country);
    expect(countries.filter((c) => /^[A-Z]{2}$/.test(c)).length).toBeGreaterThan(9_000);
  });
});
