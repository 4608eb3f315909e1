import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuctionErrorCode, AuctionException } from './auction.exception';
import { sendPixel } from './serving/ad-answer';

export function httpStatusOf(code: AuctionErrorCode): number {
  switch (code) {
    case AuctionErrorCode.UnknownAdSlot:
    case AuctionErrorCode.UnknownAdvertiser:
    case AuctionErrorCode.UnknownDsp:
    case AuctionErrorCode.NotFound:
      return 404;
    case AuctionErrorCode.InvalidQuery:
      return 400;
    case AuctionErrorCode.QueryTooLarge:
      return 414;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** Image endpoints answer errors with the transparent pixel, so that an email shows no broken image. */
const IMAGE_PATHS = /^\/(img|conv|sync|s|native)(\/|$)/;

/**
 * The auction app's one filter: an auction error gets its status and a body an image tag or a
 * program can use; anything unexpected is logged and answered with a generic 500.
 */
@Catch()
export class AuctionExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Auction');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let status: number;
    let code: string;
    let message: string;
    if (exception instanceof AuctionException) {
      status = httpStatusOf(exception.code);
      code = exception.code;
      message = exception.detail;
    } else if (exception instanceof HttpException) {
      status = exception.getStatus();
      code = String(status);
      message = exception.message;
    } else {
      this.logger.error(
        exception instanceof Error ? (exception.stack ?? exception.message) : String(exception),
      );
      status = 500;
      code = 'internal_error';
      message = 'Internal error';
    }
    if (IMAGE_PATHS.test(req.path)) {
      res.setHeader('X-Error-Code', code);
      sendPixel(res, status);
      return;
    }
    res.status(status).json({ error: { code, message } });
  }
}
