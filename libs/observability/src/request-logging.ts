import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger, SerializedRequest, SerializedResponse } from 'pino';
import type { Options } from 'pino-http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** An incoming request id is kept when it is 1 to 128 visible ASCII characters. */
const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** Paths polled by probes and scrapers: not logged per request (a failing health check logs itself). */
const QUIET_PATHS = new Set(['/health', '/metrics']);

/** Response headers worth a place in the request's log line. */
const LOGGED_RESPONSE_HEADERS = ['content-type', 'content-length', 'x-report-code'] as const;

const MAX_LOGGED_HEADER = 256;

/**
 * The request's correlation id: the client's `X-Request-Id` when valid, else a new UUID. It is
 * echoed in the response's `X-Request-Id` (pino-http's `genReqId`, called once per request).
 */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && VALID_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

function clipped(value: unknown): string | undefined {
  if (typeof value !== 'string') {
    return undefined;
  }
  return value.length > MAX_LOGGED_HEADER ? `${value.slice(0, MAX_LOGGED_HEADER)}…` : value;
}

function pathOf(url: string | undefined): string {
  return (url ?? '').split('?')[0];
}

/**
 * pino-http's options: the app's logger, the request id, and what of a request is logged. A
 * successful request to a path of `highVolume` (the ad tag: thousands a second) is logged at debug
 * level; its metrics count it.
 */
export function httpLoggerOptions(appLogger: Logger, highVolume?: RegExp): Options {
  return {
    logger: appLogger,
    genReqId: requestIdOf,
    // Lines logged while serving a request carry its id, not the whole request (only the line
    // that closes the request has it).
    quietReqLogger: true,
    customLogLevel: (req, res, error) => {
      if (error || res.statusCode >= 500) {
        return 'error';
      }
      return highVolume?.test(pathOf(req.url)) && res.statusCode < 400 ? 'debug' : 'info';
    },
    autoLogging: { ignore: (req) => QUIET_PATHS.has(pathOf(req.url)) },
    serializers: {
      // Never the body, the query string or credentials: what a request carries may be secret.
      req: (req: SerializedRequest) => ({
        method: req.method,
        path: pathOf(req.url),
        remoteAddress: req.remoteAddress,
        contentType: clipped(req.headers['content-type']),
        contentLength: clipped(req.headers['content-length']),
        accept: clipped(req.headers.accept),
        userAgent: clipped(req.headers['user-agent']),
      }),
      res: (res: SerializedResponse) => ({
        statusCode: res.statusCode,
        ...Object.fromEntries(
          LOGGED_RESPONSE_HEADERS.filter((name) => res.headers[name] !== undefined).map((name) => [
            name,
            res.headers[name],
          ]),
        ),
      }),
    },
  };
}

/** nestjs-pino's module for an app: pino-http on every route, with the app's logger. */
export function requestLoggingModule(appLogger: Logger, highVolume?: RegExp): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: httpLoggerOptions(appLogger, highVolume),
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
  });
}
