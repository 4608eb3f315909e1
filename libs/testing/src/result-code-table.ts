import { ReportCode } from '@app/report-model';

/**
 * The result codes as docs/reporting-api.md's table ("Result codes and HTTP statuses") and the reporting
 * specification's part 7 (docs/specification-notes.md#reporting-part-7) give them, written out by hand: the
 * HTTP status of each, and the words its message starts with (the specification's "Meaning"). Tests compare
 * the service with this table, never with the code that builds the answers and the OpenAPI document from the
 * catalogue.
 */
export const RESULT_CODE_TABLE: Readonly<Record<ReportCode, { status: number; meaning: string }>> = {
  [ReportCode.AuthenticationFailed]: { status: 401, meaning: 'Authentication failed' },
  [ReportCode.AccountDisabled]: { status: 401, meaning: 'Authentication failed' },
  [ReportCode.InvalidSeed]: { status: 401, meaning: 'Invalid seed' },
  [ReportCode.SeedTooLow]: { status: 401, meaning: 'Seed too low' },
  [ReportCode.SeedOutOfWindow]: { status: 401, meaning: 'Seed not within 5 minutes of the UNIX time' },
  [ReportCode.TokenNotFound]: { status: 401, meaning: 'Token not found' },
  [ReportCode.InvalidHash]: { status: 401, meaning: 'Invalid hash' },
  [ReportCode.InvalidId]: { status: 401, meaning: 'Invalid id' },
  [ReportCode.AccountSuspended]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.NotPublisherAccount]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.NotMediaGroupAccount]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.FilterOutsideAccount]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.VariantTypeDenied]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.ApiAccessDenied]: { status: 403, meaning: 'Permission denied' },
  [ReportCode.QueryLimitExceeded]: { status: 429, meaning: 'Query limit exceeded' },
  [ReportCode.InternalError]: { status: 500, meaning: 'Internal error' },
  [ReportCode.Ok]: { status: 200, meaning: 'OK' },
  [ReportCode.NoData]: { status: 200, meaning: 'No data returned' },
  [ReportCode.DimensionsRemoved]: { status: 200, meaning: 'Dimensions removed' },
  [ReportCode.StoreUnavailable]: { status: 503, meaning: 'Internal error' },
  [ReportCode.QueryTimeout]: { status: 504, meaning: 'Internal error' },
  [ReportCode.MissingParameter]: { status: 403, meaning: 'Required parameter missing' },
  [ReportCode.IncorrectType]: { status: 403, meaning: 'Incorrect type' },
  [ReportCode.InvalidInput]: { status: 403, meaning: 'Invalid input' },
  [ReportCode.InvalidContentType]: { status: 400, meaning: 'Invalid content-type' },
  [ReportCode.InvalidFunction]: { status: 404, meaning: 'Invalid function' },
  [ReportCode.InvalidDimension]: { status: 403, meaning: 'Invalid dimension' },
};
