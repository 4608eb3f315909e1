import { Inject, Injectable } from '@nestjs/common';
import { STATE_STORE, type StateStore } from '@app/state-store';

/** A DSP's answer to a sync: its id for the user, or none when it does not want to match. */
export interface SyncMatch {
  readonly buyerUid: string;
  /** UNIX seconds after which the user is matched again; absent for no expiration. */
  readonly expiresAt?: number;
}

const YEAR_MS = 365 * 24 * 3_600_000;

/** A match counts until its expiration (UNIX seconds), or for good when it has none. */
export function isLive(match: SyncMatch, nowS: number): boolean {
  return match.expiresAt === undefined || match.expiresAt > nowS;
}
/** How long a sync redirect waits for its callback before the DSP may be asked again. */
const PENDING_MS = 10 * 60_000;

/**
 * User sync state in the state store: each DSP's match per exchange user, the sync redirects in
 * flight (so that a DSP that never calls back is not asked again on every load: no redirect
 * loop), and the recipients bound to an exchange user.
 */
@Injectable()
export class UserSyncStore {
  constructor(@Inject(STATE_STORE) private readonly state: StateStore) {}

  async match(dspId: string, exchangeUuid: string): Promise<SyncMatch | undefined> {
    const raw = await this.state.get(`sync:${dspId}:${exchangeUuid}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as SyncMatch);
  }

  async keep(dspId: string, exchangeUuid: string, match: SyncMatch, nowMs: number): Promise<void> {
    const ttl = match.expiresAt === undefined ? YEAR_MS : Math.min(YEAR_MS, match.expiresAt * 1000 - nowMs);
    if (ttl <= 0) {
      return;
    }
    await this.state.set(`sync:${dspId}:${exchangeUuid}`, JSON.stringify(match), ttl);
    await this.state.delete(`sync-pending:${dspId}:${exchangeUuid}`);
  }

  /** True when no sync with this DSP is in flight for the user; marks one as in flight. */
  startSync(dspId: string, exchangeUuid: string): Promise<boolean> {
    return this.state.setIfAbsent(`sync-pending:${dspId}:${exchangeUuid}`, '1', PENDING_MS);
  }

  async bindRecipient(recipientUserId: string, exchangeUuid: string): Promise<void> {
    await this.state.set(`sync-recipient:${recipientUserId}`, exchangeUuid, YEAR_MS);
  }

  boundUser(recipientUserId: string): Promise<string | undefined> {
    return this.state.get(`sync-recipient:${recipientUserId}`);
  }
}
