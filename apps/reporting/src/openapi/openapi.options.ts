import type { ReportingConfig } from '../reporting.config';

/** What the API description needs of the reporting app: the limits it states. */
export interface OpenApiModuleOptions {
  readonly config: Pick<ReportingConfig, 'SEED_WINDOW_SECONDS' | 'RATE_LIMIT_PER_SECOND' | 'MAX_BODY_BYTES'>;
}

export const OPENAPI_DOCUMENT = Symbol('OPENAPI_DOCUMENT');
