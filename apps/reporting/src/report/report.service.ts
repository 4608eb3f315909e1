import { Inject, Injectable } from '@nestjs/common';
import type { Catalog, CatalogSource } from '@app/catalog';
import { ReportCode, type StoreQuery } from '@app/report-model';
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
import { StreamedReport, storeOrder, type Report, type ReportSource } from './report-builder';
import { planReport, type ReportPlan } from './report-planner';
import { RowBuffer } from './row-buffer';

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

/** Turns the store's failures into the API's codes (701, 702, 53); anything else passes as it is. */
async function storeCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ReportStoreException) {
      throw storeFailure(error);
    }
    throw error;
  }
}

/**
 * A report whose rows nobody starts reading within this time (the response failed between the
 * service and the renderer) gives its store stream back.
 */
const ABANDON_AFTER_MS = 60_000;

/**
 * One report request from decoded body to a report ready to stream: auth, limits, validation, the
 * query started and its first row read (every row, for totals on top).
 */
@Injectable()
export class ReportService {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    private readonly authentication: AuthenticationService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(REPORT_STORE) private readonly store: ReportStore,
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
  ) {}

  async run(body: Record<string, unknown>, now: Date): Promise<ReportOutcome> {
    const auth = await this.authentication.authenticate(body, now);
    await this.rateLimiter.consume(auth.user.id, now);
    if (body.function !== undefined && body.function !== 'data') {
      throw new ReportingException(ReportCode.InvalidFunction, 'function must be data');
    }
    const dto = validateReportRequest(body);
    // One catalog for the whole report, though a reload may swap it meanwhile.
    const catalog = this.catalog;
    const plan = planReport(dto, auth, catalog, now);
    const query: StoreQuery = {
      range: plan.range,
      split: plan.split,
      filters: plan.filters,
      scope: plan.scope,
      tier: plan.tier,
      timeoutMs: this.config.QUERY_TIMEOUT_MS,
    };
    // One store read makes the whole report, rows and totals alike: two reads would see two states
    // of a store being written to (issue 22), so the totals are always the sums of the rows read.
    const stream = this.store.stream({ ...query, order: storeOrder(plan, catalog) });
    const rows = stream[Symbol.asyncIterator]();
    let source: Omit<ReportSource, 'abandonAfterMs'>;
    if (plan.columnTotals === 'top') {
      // Totals on top need the sums before the first row: every row is read first, held compactly.
      const buffer = await storeCall(() => RowBuffer.readAll(rows));
      source = { first: buffer.shift(), rest: buffer, upfrontSums: buffer.sums };
    } else {
      // The first row is read before anything is sent: the store's failures still map to their
      // codes, and an empty report is known (201) while the headers can still say so. The totals
      // at the bottom are summed as the rows pass.
      source = { first: await storeCall(() => rows.next()), rest: rows };
    }
    const report = new StreamedReport(plan, catalog, { ...source, abandonAfterMs: ABANDON_AFTER_MS });
    const code = report.empty
      ? ReportCode.NoData
      : plan.removedColumns.length > 0
        ? ReportCode.DimensionsRemoved
        : ReportCode.Ok;
    return { code, plan, report };
  }
}
