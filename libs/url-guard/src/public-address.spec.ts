import { describe, expect, it } from 'vitest';
import { FORBIDDEN_ADDRESS_CODE, isForbiddenAddress, publicAddressLookup } from './public-address';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a00:1',
    '64:ff9b::a00:1',
    '64:ff9b::169.254.169.254',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    'not an address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('publicAddressLookup', () => {
  it.each([true, false])('refuses a name that resolves to loopback (all: %s)', async (all) => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      publicAddressLookup('localhost', { all }, (lookupError) => resolve(lookupError)),
    );
    expect(error?.code).toBe(FORBIDDEN_ADDRESS_CODE);
  });
});
