import type { Clock } from '../reporting.tokens';
import type { ReportingConfig } from '../reporting.config';

/** What the report builder needs of the reporting app: its limits and its clock. */
export interface ReportBuilderOptions {
  readonly config: Pick<ReportingConfig, 'SEED_WINDOW_SECONDS' | 'RATE_LIMIT_PER_SECOND'>;
  readonly clock?: Clock;
}

export const REPORT_BUILDER_OPTIONS = Symbol('REPORT_BUILDER_OPTIONS');
