import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AccountRecord, Catalog, CatalogSource, UserRecord } from '@app/catalog';
import { ReportCode } from '@app/report-model';
import { STATE_STORE, type StateStore } from '@app/state-store';
import { ReportingException } from '../reporting.exception';
import { CATALOG, REPORTING_CONFIG } from '../reporting.tokens';
import type { ReportingConfig } from '../reporting.config';

export interface AuthenticatedUser {
  readonly user: UserRecord;
  readonly account: AccountRecord;
}

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const HASH_PATTERN = /^[0-9a-fA-F]{40}$/;

function fail(code: ReportCode, detail?: string): never {
  throw new ReportingException(code, detail);
}

/** The seed as the integer the client hashed: a JSON integer or a string of digits (XML). */
function seedOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) {
    return value;
  }
  if (typeof value === 'string' && /^\d{1,15}$/.test(value.trim())) {
    return Number(value.trim());
  }
  return undefined;
}

/**
 * Reporting part 5 (docs/specification-notes.md#reporting-part-5): id, seed and hash = SHA1(token + seed).
 * Checks run from the cheapest to the one that changes state, so that only a request with a valid hash can
 * advance the user's last seed. Codes: 10 missing credentials, 52 bad id, 30 unknown user, 20/22 bad seed, 31
 * bad hash, 11 disabled user, 40 suspended account, 900 no API access, 21 replayed seed.
 */
@Injectable()
export class AuthenticationService {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
  ) {}

  async authenticate(body: Record<string, unknown>, now: Date): Promise<AuthenticatedUser> {
    const { id, seed: rawSeed, hash } = body;
    if (id === undefined || rawSeed === undefined || hash === undefined) {
      fail(ReportCode.AuthenticationFailed, 'id, seed and hash are required');
    }
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      fail(ReportCode.InvalidId);
    }
    const user = this.catalog.users.get(id);
    if (!user) {
      fail(ReportCode.TokenNotFound);
    }

    const seed = seedOf(rawSeed);
    if (seed === undefined) {
      fail(ReportCode.InvalidSeed, 'seed must be a UNIX timestamp in seconds');
    }
    const windowSeconds = this.config.SEED_WINDOW_SECONDS;
    if (Math.abs(seed - Math.floor(now.getTime() / 1000)) > windowSeconds) {
      fail(ReportCode.SeedOutOfWindow);
    }

    // Reporting part 7's 31 (docs/specification-notes.md#reporting-part-7) for every hash that fails,
    // malformed or not SHA1(token + seed); 10 stays for missing credentials, 11 for a disabled user.
    if (typeof hash !== 'string' || !HASH_PATTERN.test(hash)) {
      fail(ReportCode.InvalidHash, 'hash must be 40 hex digits');
    }
    const expected = createHash('sha1').update(`${user.token}${seed}`).digest();
    if (!timingSafeEqual(expected, Buffer.from(hash, 'hex'))) {
      fail(ReportCode.InvalidHash, 'hash is not SHA1 of the token followed by the seed');
    }

    if (user.status !== 'active') {
      fail(ReportCode.AccountDisabled);
    }
    const account = this.catalog.accounts.get(user.accountId);
    if (!account) {
      fail(ReportCode.AccountDisabled);
    }
    if (account.status !== 'active') {
      fail(ReportCode.AccountSuspended);
    }
    if (!user.apiAccess) {
      fail(ReportCode.ApiAccessDenied);
    }

    const accepted = await this.state.advanceIfGreater(`seed:${user.id}`, seed, 2 * windowSeconds * 1000);
    if (!accepted) {
      fail(ReportCode.SeedTooLow, 'each request needs a seed greater than the last one');
    }
    return { user, account };
  }
}
