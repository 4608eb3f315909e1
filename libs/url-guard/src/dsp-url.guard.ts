import { isIP, type LookupFunction } from 'node:net';
import { isHttpUrl } from '@app/openrtb';
import { FORBIDDEN_ADDRESS_CODE, isForbiddenAddress, publicAddressLookup } from './public-address';

/** Why a URL a DSP gave us is not called; the values go into metrics as they are. */
export enum UrlRefusal {
  /** Not an absolute http(s) URL that can be called as it is (see `isHttpUrl`). */
  InvalidUrl = 'invalid_url',
  /** Its host is, or resolves to, a private, loopback, link-local or otherwise internal address. */
  ForbiddenAddress = 'forbidden_address',
}

export type UrlVerdict =
  | { readonly ok: true; readonly target: URL }
  | { readonly ok: false; readonly reason: UrlRefusal; readonly detail: string };

/**
 * The one guard of every URL a DSP gives the exchange and the exchange calls server to server:
 * win, billing and loss notices, impression and click trackers, native images. It refuses a URL
 * that is not plain absolute http(s), or whose host is an internal address: as a literal here, as
 * a name at connect time (`connect`, given to the caller's undici agent, checks the addresses the
 * socket is given, so that a DNS answer cannot change between a check and the connection). One
 * setting, `DSP_URL_ALLOW_PRIVATE`, lets private addresses through (local runs and tests, whose
 * DSPs listen on loopback); syntax is checked whatever it says.
 */
export class DspUrlGuard {
  /** The `connect` options of an undici agent that calls guarded URLs. */
  readonly connect: { readonly lookup?: LookupFunction };

  constructor(readonly allowPrivate: boolean) {
    this.connect = allowPrivate ? {} : { lookup: publicAddressLookup };
  }

  check(url: string): UrlVerdict {
    if (!isHttpUrl(url)) {
      return { ok: false, reason: UrlRefusal.InvalidUrl, detail: 'not an absolute http(s) URL' };
    }
    const target = new URL(url);
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!this.allowPrivate && isIP(host) !== 0 && isForbiddenAddress(host)) {
      return { ok: false, reason: UrlRefusal.ForbiddenAddress, detail: `${host} is not a public address` };
    }
    return { ok: true, target };
  }

  /** Whether a call failed because `connect` refused the addresses its host resolved to. */
  static refusedConnection(error: unknown): boolean {
    for (let e = error; e instanceof Error; e = e.cause) {
      if ((e as NodeJS.ErrnoException).code === FORBIDDEN_ADDRESS_CODE) {
        return true;
      }
    }
    return false;
  }
}
