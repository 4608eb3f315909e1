import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { PinoNestLogger } from '@app/observability';

export interface HttpAppOptions {
  readonly host: string;
  readonly port: number;
  readonly logger: Logger;
  readonly name: string;
}

/**
 * Creates and starts one Nest HTTP app. Body parsing is left to the controllers, which enforce
 * their own size limits on the raw stream.
 */
export async function startHttpApp(module: unknown, options: HttpAppOptions): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module as never, {
    bodyParser: false,
    logger: new PinoNestLogger(options.logger.child({ app: options.name })),
  });
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  await app.listen(options.port, options.host);
  options.logger.info(
    { app: options.name, url: `http://${options.host}:${listeningPort(app)}` },
    'listening',
  );
  return app;
}

/** The port an app actually listens on (useful when configured with port 0). */
export function listeningPort(app: INestApplication): number {
  const server = app.getHttpServer() as Server;
  return (server.address() as AddressInfo).port;
}
