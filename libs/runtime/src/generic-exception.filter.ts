import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';

/**
 * The filter of the apps whose HTTP surface is health, metrics and (later) their own routes:
 * HTTP exceptions keep their status, anything else is logged and answered with a generic 500.
 */
@Catch()
export class GenericExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Http');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (exception instanceof HttpException) {
      res
        .status(exception.getStatus())
        .json({ error: { code: exception.getStatus(), message: exception.message } });
      return;
    }
    this.logger.error(
      exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
    );
    res.status(500).json({ error: { code: 500, message: 'Internal error' } });
  }
}
