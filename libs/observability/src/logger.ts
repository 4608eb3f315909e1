import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { Logger as NestjsPinoLogger, PinoLogger } from 'nestjs-pino';
import pino, { type DestinationStream, type Logger } from 'pino';

/** Fields named like secrets, redacted wherever they appear: tokens, hashes, credentials. */
export const REDACTED_PATHS: readonly string[] = [
  'token',
  'hash',
  '*.token',
  '*.hash',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
];

/** Structured JSON logs. `destination` defaults to stdout (tests pass a stream to read the lines). */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    base: undefined,
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The app (and request) whose work is running: set around an app's start and around each request. */
interface LogScope {
  readonly logger: Logger;
  readonly req?: IncomingMessage;
}

const scopes = new AsyncLocalStorage<LogScope>();

/**
 * Runs `start` with `logger` (an app's logger) as the logger of everything it sets going: the
 * app's construction and lifecycle hooks, and the timers, consumers and server they start, whose
 * callbacks inherit the scope.
 */
export function runWithAppLogger<T>(logger: Logger, start: () => T): T {
  return scopes.run({ logger }, start);
}

/**
 * Middleware binding a request to its app's scope: lines written while serving it go through
 * pino-http's request logger (`req.log`, which carries the app and the request id) once set.
 */
export function bindRequestScope(
  logger: Logger,
): (req: IncomingMessage, res: unknown, next: () => void) => void {
  return (req, _res, next) => scopes.run({ logger, req }, next);
}

/** The logger of the request or app being served, if any. */
export function scopedLogger(): Logger | undefined {
  const scope = scopes.getStore();
  return scope?.req?.log ?? scope?.logger;
}

/** nestjs-pino's PinoLogger, writing each line through the logger of the current scope. */
class ScopedPinoLogger extends PinoLogger {
  constructor(private readonly fallback: Logger) {
    // nestjs-pino keeps the first logger it is given as its out-of-request fallback, process-wide:
    // this one bypasses it (see `logger`), and makes it the process's logger if first.
    super({ pinoHttp: { logger: fallback } });
  }

  override get logger(): Logger {
    return scopedLogger() ?? this.fallback;
  }
}

/**
 * Nest's logger (nestjs-pino's mapping of Nest's calls onto pino). Nest keeps one logger per
 * process, behind every `new Logger(context)`: with several apps in one process, the last app
 * created used to receive every line, whichever app wrote it. This one writes each line through
 * the scope's logger, so that a line names the app (and the request) it belongs to; `fallback`
 * takes the lines written outside any app.
 */
export class PinoNestLogger extends NestjsPinoLogger {
  constructor(fallback: Logger) {
    super(new ScopedPinoLogger(fallback), {});
  }
}
