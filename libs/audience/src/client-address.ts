import { isIP } from 'node:net';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** Dual-stack sockets report IPv4 peers as `::ffff:a.b.c.d`; this gives back `a.b.c.d`. */
export function unmapIpv4(address: string): string {
  const mapped = MAPPED_IPV4.exec(address);
  return mapped && isIP(mapped[1]) === 4 ? mapped[1] : address;
}

/**
 * The viewer's address. Each trusted proxy appends the peer it saw to X-Forwarded-For, so behind
 * N of them the client is the Nth entry from the right; entries further left were written by the
 * client and can say anything. When that entry is missing or not an address, the socket peer is
 * the only address nobody could forge.
 */
export function clientAddress(
  remoteAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxyHops: number,
): string {
  const peer = remoteAddress ? unmapIpv4(remoteAddress) : '';
  if (trustedProxyHops < 1 || !forwardedFor) {
    return peer;
  }
  const entry = nthFromRight(forwardedFor, trustedProxyHops);
  if (entry === undefined) {
    return peer;
  }
  const address = unmapIpv4(entry);
  return isIP(address) === 0 ? peer : address;
}

/** Scans from the right, so a long forged header costs no more than the hops we trust. */
function nthFromRight(header: string, n: number): string | undefined {
  let end = header.length;
  for (let i = 1; i < n; i += 1) {
    end = header.lastIndexOf(',', end - 1);
    if (end < 0) {
      return undefined;
    }
  }
  return header.slice(header.lastIndexOf(',', end - 1) + 1, end).trim();
}
