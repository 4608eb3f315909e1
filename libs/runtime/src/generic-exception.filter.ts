import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { throwError, type Observable } from 'rxjs';

/**
 * The filter of the apps whose HTTP surface is health, metrics and (later) their own routes:
 * HTTP exceptions keep their status, anything else is logged and answered with a generic 500.
 *
 * As the app's global filter it also sees the errors of the event-bus transport's handlers, which
 * have no response to write: those are handed back unchanged, so that the transport redelivers the
 * batch. Writing to the RPC context as if it were HTTP threw a TypeError, which kafkajs takes for a
 * bug: it stopped the ingest's consumer for good while the process lived (docs/exactness.md).
 */
@Catch()
export class GenericExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  catch(exception: unknown, host: ArgumentsHost): Observable<never> | undefined {
    if (host.getType() !== 'http') {
      return throwError(() => exception);
    }
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.destroy();
      return undefined;
    }
    if (exception instanceof HttpException) {
      res
        .status(exception.getStatus())
        .json({ error: { code: exception.getStatus(), message: exception.message } });
      return undefined;
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    res.status(500).json({ error: { code: 500, message: 'Internal error' } });
    return undefined;
  }
}
