import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ReportCode, REPORT_CODE_MESSAGES } from '@app/report-model';
import { reportRequests } from '@app/observability';
import { ReportingException } from './reporting.exception';
import { ReportRendererService } from './render/report-renderer.service';
import { negotiateResponseFormat, type RequestFormat } from './request/media-type';

/**
 * Reporting part 7 (docs/specification-notes.md#reporting-part-7), with the statuses docs/reporting-api.md
 * fixes for the codes the specification leaves open ("Result codes and HTTP statuses").
 */
export function httpStatusOf(code: ReportCode): number {
  switch (code) {
    case ReportCode.AuthenticationFailed:
    case ReportCode.AccountDisabled:
    case ReportCode.InvalidSeed:
    case ReportCode.SeedTooLow:
    case ReportCode.SeedOutOfWindow:
    case ReportCode.TokenNotFound:
    case ReportCode.InvalidHash:
    case ReportCode.InvalidId:
      return 401;
    case ReportCode.AccountSuspended:
    case ReportCode.NotPublisherAccount:
    case ReportCode.NotMediaGroupAccount:
    case ReportCode.FilterOutsideAccount:
    case ReportCode.VariantTypeDenied:
    case ReportCode.ApiAccessDenied:
    case ReportCode.MissingParameter:
    case ReportCode.IncorrectType:
    case ReportCode.InvalidInput:
    case ReportCode.InvalidDimension:
      return 403;
    case ReportCode.QueryLimitExceeded:
      return 429;
    case ReportCode.InternalError:
      return 500;
    case ReportCode.Ok:
    case ReportCode.NoData:
    case ReportCode.DimensionsRemoved:
      return 200;
    case ReportCode.StoreUnavailable:
      return 503;
    case ReportCode.QueryTimeout:
      return 504;
    case ReportCode.InvalidContentType:
      return 400;
    case ReportCode.InvalidFunction:
      return 404;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** Where the controller records the request format once known, for error bodies. */
export const REQUEST_FORMAT_LOCAL = 'reportRequestFormat';

/**
 * The reporting app's one filter: every failure answers in the client's format with the result
 * code in the body and in `X-Report-Code`; anything unexpected is logged and answered as 53.
 */
@Catch()
export class ReportingExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Reporting');

  constructor(private readonly renderer: ReportRendererService) {}

  /** Through pino-http's request logger when there is one: the line names the app and the request. */
  private logError(req: Request, exception: unknown, message: string): void {
    if (req.log) {
      req.log.error({ err: exception, context: 'Reporting' }, message);
    } else {
      this.logger.error(message, exception instanceof Error ? exception.stack : String(exception));
    }
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (res.headersSent) {
      this.logError(req, exception, 'failure after the response started');
      res.destroy();
      return;
    }
    let code: ReportCode;
    let message: string;
    let status: number;
    let headers: Readonly<Record<string, string>> = {};
    if (exception instanceof ReportingException) {
      code = exception.code;
      message = exception.message;
      status = exception.httpStatus ?? httpStatusOf(code);
      headers = exception.headers;
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
      code = status === 404 ? ReportCode.InvalidFunction : ReportCode.InvalidInput;
      message = exception.message;
    } else {
      this.logError(req, exception, 'unexpected failure, answered with code 53');
      code = ReportCode.InternalError;
      message = REPORT_CODE_MESSAGES[ReportCode.InternalError];
      status = 500;
    }
    reportRequests.inc({ code: String(code) });
    const requestFormat: RequestFormat =
      (res.locals[REQUEST_FORMAT_LOCAL] as RequestFormat | undefined) ?? 'json';
    const format = negotiateResponseFormat(req.headers.accept, requestFormat);
    const rendered = this.renderer.renderError(code, message, format);
    res
      .status(status)
      .set({ ...headers, 'X-Report-Code': String(code), 'Content-Type': rendered.contentType });
    res.send(rendered.body);
  }
}
