import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a DSP's image URL must not reach: the exchange fetches whatever URL a bid names, from
 * inside its own network, and serves what it gets back as a picture. Without this an image URL of
 * http://10.0.0.5/ or http://169.254.169.254/ would make the exchange an open proxy to its private
 * services (server-side request forgery).
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

/** Whether an IP address literal is private, loopback, link-local or otherwise not on the Internet. */
export function isForbiddenAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 0) {
    return true;
  }
  if (version === 4) {
    return FORBIDDEN.check(address, 'ipv4');
  }
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) {
    return FORBIDDEN.check(mapped[1], 'ipv4');
  }
  return FORBIDDEN.check(address, 'ipv6');
}

/** The code of the error a guarded lookup fails with, for the fetcher to tell it from DNS failures. */
export const FORBIDDEN_ADDRESS_CODE = 'ERR_NATIVE_IMAGE_FORBIDDEN_ADDRESS';

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
