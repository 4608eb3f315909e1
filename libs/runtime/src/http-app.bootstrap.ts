import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { CustomTransportStrategy } from '@nestjs/microservices';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { PinoNestLogger, bindRequestScope, requestLoggingModule, runWithAppLogger } from '@app/observability';

export interface HttpAppOptions {
  readonly host: string;
  readonly port: number;
  /** The process's logger; the app logs through a child naming it (`"app": name`). */
  readonly logger: Logger;
  readonly name: string;
  /** Paths whose successful requests are logged at debug level (high-volume endpoints). */
  readonly highVolumePaths?: RegExp;
  /**
   * Connections the kernel holds for the app while its event loop is busy (the listen backlog;
   * Linux caps it at `net.core.somaxconn`). Node's default is 511.
   */
  readonly backlog?: number;
  /** Microservice transports of the app, started before the HTTP server and closed with the app. */
  readonly transports?: readonly CustomTransportStrategy[];
}

/**
 * How long an idle client connection is kept open. Node's default (5 s) closes the connections of
 * a client that pauses a few seconds, and the client opens them again when its traffic rises: in
 * the auction's open-loop benchmark at twice the saturating rate, those reopenings put up to
 * 240-1,650 ms before the process read the requests, in the seconds they happened (client p99
 * 146-347 ms, against 123-145 ms with this; BENCHMARKS.md). It is longer than the idle timeouts
 * of common load balancers (60 s), so that the proxy in front, not this server, closes an idle
 * connection: the server closing it first races a request the proxy is sending on it, which then
 * fails.
 */
const KEEP_ALIVE_MS = 65_000;

/** The root of every HTTP app: its own module beside nestjs-pino's request logging. */
@Module({})
class HttpAppModule {}

/**
 * Creates and starts one Nest HTTP app. Body parsing is left to the controllers, which enforce
 * their own size limits on the raw stream. Every request gets a correlation id (`X-Request-Id`) and
 * a log line; every line the app writes, Nest's included, names the app, and during a request
 * carries its id, also when several apps share the process. Signals are the composition root's:
 * Nest's own shutdown hooks would re-raise SIGTERM after closing and end the process with 143
 * before the root has closed the adapters.
 */
export async function startHttpApp(module: unknown, options: HttpAppOptions): Promise<INestApplication> {
  const appLogger = options.logger.child({ app: options.name });
  const root: DynamicModule = {
    module: HttpAppModule,
    imports: [requestLoggingModule(appLogger, options.highVolumePaths), module as DynamicModule],
  };
  return runWithAppLogger(appLogger, async () => {
    const app = await NestFactory.create<NestExpressApplication>(root, {
      bodyParser: false,
      logger: new PinoNestLogger(options.logger),
    });
    app.use(bindRequestScope(appLogger));
    app.disable('x-powered-by');
    for (const strategy of options.transports ?? []) {
      app.connectMicroservice({ strategy }, { inheritAppConfig: true });
    }
    await app.startAllMicroservices();
    // Nest hands every argument on to the server's listen(port, host, backlog); its types name two.
    const listen = app.listen.bind(app) as unknown as (
      port: number,
      host: string,
      backlog: number,
    ) => Promise<unknown>;
    const server: Server = app.getHttpServer();
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    await listen(options.port, options.host, options.backlog ?? 511);
    appLogger.info({ url: `http://${options.host}:${listeningPort(app)}` }, 'listening');
    return app;
  });
}

/** The port an app actually listens on (useful when configured with port 0). */
export function listeningPort(app: INestApplication): number {
  const server = app.getHttpServer() as Server;
  return (server.address() as AddressInfo).port;
}
