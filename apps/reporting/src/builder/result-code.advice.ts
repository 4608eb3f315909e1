import { ReportCode } from '@app/report-model';

/**
 * What a person should do about each result code, in plain words: shown by the report builder
 * under the catalogue's message, and listed in the OpenAPI description. `{wait}` stands for the
 * `Retry-After` value of the response ("1 second", "3 seconds").
 */
export const REPORT_CODE_ADVICE: Readonly<Record<ReportCode, string>> = {
  [ReportCode.AuthenticationFailed]: 'The request lacked the id, the seed or the signature. Sign in again.',
  [ReportCode.AccountDisabled]:
    'This user or its account is disabled. Ask your account manager to enable it again.',
  [ReportCode.InvalidSeed]:
    'The request carried a seed the service cannot read. Reload the page and try again.',
  [ReportCode.SeedTooLow]:
    'A newer request of this user was accepted first (another tab or a script using the same id?). Wait a few seconds, then try again.',
  [ReportCode.SeedOutOfWindow]:
    "Your computer's clock and the service's differ by more than the allowed window. Reload the page to synchronise, then try again.",
  [ReportCode.TokenNotFound]: 'No user has this id. Check the id you received at onboarding.',
  [ReportCode.InvalidHash]:
    'The token does not match this id, so the request signature was refused. Check the token and sign in again.',
  [ReportCode.InvalidId]:
    'This is not a valid user id: ids are 1 to 64 letters, digits, dots, dashes or underscores. Check the id you received at onboarding.',
  [ReportCode.AccountSuspended]: 'The account is suspended. Contact your account manager.',
  [ReportCode.NotPublisherAccount]:
    'This account has no publisher inventory: choose Advertiser as the report type.',
  [ReportCode.NotMediaGroupAccount]:
    'This account is not a media group: choose Publisher as the report type.',
  [ReportCode.FilterOutsideAccount]:
    'A filter names something that belongs to another account. Remove that filter or use ids of your own account.',
  [ReportCode.VariantTypeDenied]: 'This user may run advertiser reports only: choose Advertiser.',
  [ReportCode.QueryLimitExceeded]: 'Too many requests in one second. Wait {wait}, then run the report again.',
  [ReportCode.InternalError]:
    'Something went wrong on our side. Try again in a minute; if it keeps happening, contact support and quote the request id.',
  [ReportCode.Ok]: 'The report is ready.',
  [ReportCode.NoData]:
    'There is no data for this range and these filters. Reports cover closed days only (up to yesterday): try a wider date range or fewer filters.',
  [ReportCode.DimensionsRemoved]:
    'Some columns were left out because they do not apply to this report type; they are named above the table.',
  [ReportCode.StoreUnavailable]: 'The report store is unavailable at the moment. Try again in a few minutes.',
  [ReportCode.QueryTimeout]:
    'The report took too long to compute. Choose a shorter date range, a coarser split or more filters.',
  [ReportCode.ApiAccessDenied]:
    'This user has no access to the reporting API. Ask your account manager to enable it.',
  [ReportCode.MissingParameter]: 'A required field is missing: check the dates, the split and the columns.',
  [ReportCode.IncorrectType]:
    'A field has the wrong type. Check the values of the form and run the report again.',
  [ReportCode.InvalidInput]:
    'A value is not valid. Dates must be before today and at most one year apart (for example "yesterday", "-7 days" or "2026-01-31"); check the filters and the sort too.',
  [ReportCode.InvalidContentType]: 'The request was not sent as JSON or XML. Reload the page and try again.',
  [ReportCode.InvalidFunction]:
    'The service only answers the function "data". Reload the page and try again.',
  [ReportCode.InvalidDimension]:
    'This split, or the dimension of a filter, is not available for this report type. Choose another one.',
};

/** The advice for a code, with the wait of a `Retry-After` header filled in. */
export function adviceFor(code: ReportCode, retryAfterSeconds = 1): string {
  const wait = `${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`;
  return REPORT_CODE_ADVICE[code].replace('{wait}', wait);
}
