import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a URL a DSP gives us must not reach: the exchange calls its notices and trackers and
 * fetches its native images from inside its own network. Without this a notice URL of
 * http://10.0.0.5/ or an image at http://169.254.169.254/ would make the exchange a proxy to its
 * private services (server-side request forgery).
 */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link local
  ['ff00::', 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address in the last 32 bits of an IPv6 one, from its 16 bytes. */
function embeddedIpv4(bytes: readonly number[]): string {
  return bytes.slice(12).join('.');
}

/** An IPv6 address's 16 bytes. */
function ipv6Bytes(address: string): number[] {
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${address.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail = ''] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = text.includes('::')
    ? [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}

/**
 * Whether an IP address literal is private, loopback, link-local or otherwise not on the Internet.
 * An IPv6 address that carries an IPv4 one (mapped `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) is judged by that IPv4 address: each is a way back into a private IPv4 network.
 */
export function isForbiddenAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 0) {
    return true;
  }
  if (version === 4) {
    return FORBIDDEN.check(address, 'ipv4');
  }
  if (FORBIDDEN.check(address, 'ipv6')) {
    return true;
  }
  const bytes = ipv6Bytes(address);
  const prefix = bytes.slice(0, 12).join(',');
  if (prefix === '0,0,0,0,0,0,0,0,0,0,255,255' || prefix === '0,100,255,155,0,0,0,0,0,0,0,0') {
    return FORBIDDEN.check(embeddedIpv4(bytes), 'ipv4');
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) {
    return FORBIDDEN.check(bytes.slice(2, 6).join('.'), 'ipv4');
  }
  return false;
}

/** The code of the error a guarded lookup fails with, for a caller to tell it from DNS failures. */
export const FORBIDDEN_ADDRESS_CODE = 'ERR_DSP_URL_FORBIDDEN_ADDRESS';

/**
 * A `net.connect` lookup that resolves as usual, then refuses a host any of whose addresses is
 * forbidden. Checking at connect time, on the addresses the socket is given, leaves no window for a
 * DNS answer to change between a check and the connection (DNS rebinding). Node skips the lookup
 * for IP literals: the fetcher checks those itself.
 */
export const publicAddressLookup = ((
  hostname: string,
  options: LookupAllOptions | object,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void => {
  const all = (options as { all?: boolean }).all === true;
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      return callback(error, all ? [] : '');
    }
    const forbidden = addresses.find((entry) => isForbiddenAddress(entry.address));
    if (forbidden || addresses.length === 0) {
      const refusal: NodeJS.ErrnoException = new Error(
        `${hostname} resolves to ${forbidden?.address ?? 'nothing'}, which is not a public address`,
      );
      refusal.code = FORBIDDEN_ADDRESS_CODE;
      return callback(refusal, all ? [] : '');
    }
    if (all) {
      return callback(null, addresses);
    }
    callback(null, addresses[0].address, addresses[0].family);
  });
}) as LookupFunction;
