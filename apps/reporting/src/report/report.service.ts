import { Inject, Injectable } from '@nestjs/common';
import type { Catalog } from '@app/catalog';
import { ReportCode } from '@app/report-model';
import {
  REPORT_STORE,
  ReportStoreErrorCode,
  ReportStoreException,
  type ReportStore,
} from '@app/report-store';
import { AuthenticationService } from '../auth/authentication.service';
import { RateLimiterService } from '../auth/rate-limiter.service';
import { ReportingException } from '../reporting.exception';
import { CATALOG, REPORTING_CONFIG } from '../reporting.tokens';
import type { ReportingConfig } from '../reporting.config';
import { validateReportRequest } from '../request/request-validator';
import { buildReport, type Report } from './report-builder';
import { planReport, type ReportPlan } from './report-planner';

export interface ReportOutcome {
  readonly code: ReportCode;
  readonly plan: ReportPlan;
  readonly report: Report;
}

function storeFailure(error: ReportStoreException): ReportingException {
  switch (error.code) {
    case ReportStoreErrorCode.Unavailable:
      return new ReportingException(ReportCode.StoreUnavailable);
    case ReportStoreErrorCode.Timeout:
      return new ReportingException(ReportCode.QueryTimeout);
    case ReportStoreErrorCode.Failed:
      return new ReportingException(ReportCode.InternalError);
  }
}

/** One report request from decoded body to built report: auth, limits, validation, query. */
@Injectable()
export class ReportService {
  constructor(
    private readonly authentication: AuthenticationService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(REPORT_STORE) private readonly store: ReportStore,
    @Inject(CATALOG) private readonly catalog: Catalog,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
  ) {}

  async run(body: Record<string, unknown>, now: Date): Promise<ReportOutcome> {
    const auth = await this.authentication.authenticate(body, now);
    await this.rateLimiter.consume(auth.user.id, now);
    if (body.function !== undefined && body.function !== 'data') {
      throw new ReportingException(ReportCode.InvalidFunction, 'function must be data');
    }
    const dto = validateReportRequest(body);
    const plan = planReport(dto, auth, this.catalog, now);
    let rows;
    try {
      rows = await this.store.query({
        range: plan.range,
        split: plan.split,
        filters: plan.filters,
        scope: plan.scope,
        tier: plan.tier,
        timeoutMs: this.config.QUERY_TIMEOUT_MS,
      });
    } catch (error) {
      if (error instanceof ReportStoreException) throw storeFailure(error);
      throw error;
    }
    const report = buildReport(plan, rows, this.catalog);
    const code =
      report.records.length === 0
        ? ReportCode.NoData
        : plan.removedColumns.length > 0
          ? ReportCode.DimensionsRemoved
          : ReportCode.Ok;
    return { code, plan, report };
  }
}
