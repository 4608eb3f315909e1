import { Inject, Injectable } from '@nestjs/common';
import { ReportCode } from '@app/report-model';
import { STATE_STORE, type StateStore } from '@app/state-store';
import { ReportingException } from '../reporting.exception';
import { REPORTING_CONFIG } from '../reporting.tokens';
import type { ReportingConfig } from '../reporting.config';

/**
 * Reporting part 8 (docs/specification-notes.md#reporting-part-8): requests a second per user, counted in a
 * one-second window shared by all instances.
 */
@Injectable()
export class RateLimiterService {
  constructor(
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
  ) {}

  async consume(userId: string, now: Date): Promise<void> {
    const second = Math.floor(now.getTime() / 1000);
    const count = await this.state.increment(`rate:${userId}:${second}`, 2_000);
    if (count > this.config.RATE_LIMIT_PER_SECOND) {
      throw new ReportingException(
        ReportCode.QueryLimitExceeded,
        `at most ${this.config.RATE_LIMIT_PER_SECOND} a second`,
        { 'Retry-After': '1' },
      );
    }
  }
}
