import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Agent } from 'undici';
import { trackerCalls } from '@app/observability';
import { isHttpUrl } from '@app/openrtb';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';

export type TrackerKind = 'win_notice' | 'impression' | 'click';

/**
 * Fires win notices and trackers server to server, after the answer to the viewer: never awaited
 * by a request, bounded in time and in calls in flight (beyond the bound a call is dropped and
 * counted, so that a slow tracker host cannot pile up sockets and memory).
 */
@Injectable()
export class TrackerDispatcher implements OnApplicationShutdown {
  private readonly logger = new Logger('Trackers');
  private readonly agent: Agent;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(@Inject(AUCTION_CONFIG) private readonly config: AuctionConfig) {
    this.agent = new Agent({
      headersTimeout: config.TRACKER_TIMEOUT_MS,
      bodyTimeout: config.TRACKER_TIMEOUT_MS,
      connections: 32,
    });
  }

  fire(kind: TrackerKind, urls: readonly string[]): void {
    for (const url of urls) {
      if (!isHttpUrl(url)) {
        trackerCalls.inc({ kind, result: 'invalid_url' });
        continue;
      }
      if (this.inFlight.size >= this.config.TRACKER_MAX_IN_FLIGHT) {
        trackerCalls.inc({ kind, result: 'dropped' });
        continue;
      }
      const call = this.call(kind, url).finally(() => this.inFlight.delete(call));
      this.inFlight.add(call);
    }
  }

  /** Resolves when every call fired so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) {
      await Promise.all([...this.inFlight]);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.settled();
    await this.agent.close();
  }

  private async call(kind: TrackerKind, url: string): Promise<void> {
    try {
      const response = await this.agent.request({
        origin: new URL(url).origin,
        path: url.slice(new URL(url).origin.length) || '/',
        method: 'GET',
        headers: { 'user-agent': 'email-adx/1 (server-to-server tracker)' },
        signal: AbortSignal.timeout(this.config.TRACKER_TIMEOUT_MS),
      });
      await response.body.dump();
      trackerCalls.inc({ kind, result: response.statusCode < 400 ? 'ok' : 'http_error' });
    } catch (error) {
      trackerCalls.inc({ kind, result: 'failed' });
      this.logger.debug(`${kind} call failed: ${(error as Error).message}`);
    }
  }
}
