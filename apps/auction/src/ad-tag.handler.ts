import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuctionConfig } from './auction.config';
import { httpStatusOf } from './auction-exception.filter';
import { AuctionErrorCode, AuctionException } from './auction.exception';
import { AUCTION_CONFIG } from './auction.tokens';
import { sendPixel, sendRedirect } from './serving/ad-answer';
import { AdServingService, type AdAnswer, type TagRequest } from './serving/ad-serving.service';
import { ConversionService } from './serving/conversion.service';
import { EventPublisher } from './serving/event.publisher';
import type { TagQuery } from './serving/tag-query.parser';

type Route = 'img' | 'click' | 'conv';

const PREFIXES: readonly (readonly [string, Route])[] = [
  ['/img/', 'img'],
  ['/click/', 'click'],
  ['/conv/', 'conv'],
];

const NO_QUERY: TagQuery = Object.freeze({});

/**
 * The ad tag of a newsletter (`/img`, `/click`) and the advertiser's conversion pixel (`/conv`),
 * served on the HTTP server itself, ahead of Express and Nest: these are the thousands of requests
 * a second, and the framework's routing, middleware and request log cost more than the rest of
 * the request. Every other path goes on to the Nest app as before. An error is answered here as
 * the app's exception filter would (a transparent pixel with `X-Error-Code` on image paths); one
 * request in `AD_TAG_LOG_EVERY` gets an access log line, a failed one always.
 */
@Injectable()
export class AdTagHandler implements OnApplicationBootstrap {
  private readonly logger = new Logger('AdTag');
  private served = 0;

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    private readonly adapter: HttpAdapterHost,
    private readonly serving: AdServingService,
    private readonly conversions: ConversionService,
    private readonly events: EventPublisher,
  ) {}

  /** Puts the ad tag routes in front of the app's request listener (Express). */
  onApplicationBootstrap(): void {
    const server = this.adapter.httpAdapter.getHttpServer() as Server;
    const app = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!this.handle(req, res)) {
        for (const listener of app) {
          listener.call(server, req, res);
        }
      }
    });
  }

  /** Serves the request when it is an ad tag's; false leaves it to the app. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return false;
    }
    const url = req.url ?? '';
    const at = url.indexOf('?');
    let path = at < 0 ? url : url.slice(0, at);
    if (path.length > 1 && path.endsWith('/')) {
      path = path.slice(0, -1);
    }
    for (const [prefix, route] of PREFIXES) {
      if (path.startsWith(prefix)) {
        const segment = path.slice(prefix.length);
        if (segment === '' || segment.includes('/')) {
          return false;
        }
        const query = at < 0 ? NO_QUERY : (parseQuery(url.slice(at + 1)) as TagQuery);
        const tag = {
          slotId: segment,
          query,
          queryLength: at < 0 ? 0 : url.length - at - 1,
          req,
          readAt: performance.now(),
        };
        void this.events.track(this.serve(route, tag, res));
        return true;
      }
    }
    return false;
  }

  private async serve(route: Route, tag: TagRequest, res: ServerResponse): Promise<void> {
    const started = performance.now();
    try {
      const request = { ...tag, slotId: decodeSegment(tag.slotId) };
      switch (route) {
        case 'img': {
          const answer = await this.serving.image(request);
          // What the ad request cost us and what it waited for the DSPs, for clients and benchmarks.
          const headers = [
            'Server-Timing',
            `dsp;dur=${(answer.dspWaitMs ?? 0).toFixed(2)}, total;dur=${(performance.now() - started).toFixed(2)}`,
            ...cookie(answer),
          ];
          if (answer.location) {
            sendRedirect(res, answer.location, headers);
          } else {
            sendPixel(res, 200, headers);
          }
          break;
        }
        case 'click': {
          const answer = await this.serving.click(request);
          sendRedirect(res, answer.location!, cookie(answer));
          break;
        }
        case 'conv': {
          const { setCookie } = await this.conversions.convert(request);
          sendPixel(res, 200, cookie({ setCookie }));
          break;
        }
      }
    } catch (error) {
      this.fail(route, error, res);
    }
    this.log(tag.req, res, started);
  }

  /** The answer of the app's exception filter: an image path's is the pixel, with the code. */
  private fail(route: Route, error: unknown, res: ServerResponse): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let status = 500;
    let code = 'internal_error';
    let message = 'Internal error';
    if (error instanceof AuctionException) {
      status = httpStatusOf(error.code);
      code = error.code;
      message = error.detail;
    } else {
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    if (route === 'click') {
      const body = JSON.stringify({ error: { code, message } });
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' }).end(body);
      return;
    }
    sendPixel(res, status, ['X-Error-Code', code]);
  }

  private log(req: IncomingMessage, res: ServerResponse, started: number): void {
    this.served += 1;
    const every = this.config.AD_TAG_LOG_EVERY;
    const failed = res.statusCode >= 500;
    if (!failed && (every === 0 || this.served % every !== 0)) {
      return;
    }
    const line = JSON.stringify({
      method: req.method,
      path: (req.url ?? '').split('?')[0],
      statusCode: res.statusCode,
      ms: Math.round((performance.now() - started) * 100) / 100,
      sampledOneIn: failed ? 1 : every,
    });
    if (failed) {
      this.logger.error(`request failed ${line}`);
    } else {
      this.logger.log(`request completed ${line}`);
    }
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new AuctionException(AuctionErrorCode.InvalidQuery, 'the path is not valid percent-encoding');
  }
}

function cookie(answer: AdAnswer): string[] {
  return answer.setCookie ? ['Set-Cookie', answer.setCookie] : [];
}
