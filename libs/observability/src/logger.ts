import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/** Structured JSON logs. Fields named like secrets are redacted wherever they appear. */
export function createLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    base: undefined,
    redact: { paths: ['token', 'hash', '*.token', '*.hash', 'headers.authorization'], censor: '[redacted]' },
  });
}

/** Routes Nest's own log lines into the pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }

  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
