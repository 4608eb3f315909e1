import { type ReportCode, REPORT_CODE_MESSAGES } from '@app/report-model';

/**
 * A failure of a reporting request, carrying its result code of reporting part 7
 * (docs/specification-notes.md#reporting-part-7).
 */
export class ReportingException extends Error {
  constructor(
    readonly code: ReportCode,
    readonly detail?: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** Overrides reporting part 7's status where HTTP has a more precise one (413, 405). */
    readonly httpStatus?: number,
  ) {
    super(detail ? `${REPORT_CODE_MESSAGES[code]}: ${detail}` : REPORT_CODE_MESSAGES[code]);
    this.name = 'ReportingException';
  }
}
