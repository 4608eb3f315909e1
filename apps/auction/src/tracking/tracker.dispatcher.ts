import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, type Dispatcher } from 'undici';
import { trackerCalls } from '@app/observability';
import { isHttpUrl } from '@app/openrtb';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';

export type TrackerKind = 'win_notice' | 'impression' | 'click';

const HEADERS = ['user-agent', 'email-adx/1 (server-to-server tracker)'];

/**
 * One tracker call through undici's dispatch interface: its body is dropped as it comes, with no
 * stream, promise or timer of its own (the dispatcher's sweep ends calls past their budget).
 */
class TrackerCall implements Dispatcher.DispatchHandler {
  readonly started = performance.now();
  private abortCall?: (error?: Error) => void;
  private status = 0;
  private ended = false;

  constructor(
    private readonly dispatcher: TrackerDispatcher,
    readonly kind: TrackerKind,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abortCall = abort;
  }

  onHeaders(status: number): boolean {
    this.status = status;
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    this.end(this.status < 400 ? 'ok' : 'http_error');
  }

  onError(error: Error): void {
    this.end('failed', error.message);
  }

  expire(): void {
    this.end('failed', 'timeout');
    try {
      this.abortCall?.(new Error('tracker call timed out'));
    } catch {
      // Already ended.
    }
  }

  private end(result: 'ok' | 'http_error' | 'failed', error?: string): void {
    if (!this.ended) {
      this.ended = true;
      this.dispatcher.ended(this, result, error);
    }
  }
}

/**
 * Fires win notices and trackers server to server, after the answer to the viewer: never awaited
 * by a request, bounded in time and in calls in flight (beyond the bound a call is dropped and
 * counted, so that a slow tracker host cannot pile up sockets and memory).
 */
@Injectable()
export class TrackerDispatcher implements OnApplicationShutdown {
  private readonly logger = new Logger('Trackers');
  private readonly agent: Agent;
  private readonly inFlight = new Set<TrackerCall>();
  private readonly sweeper: NodeJS.Timeout;
  private idle: (() => void)[] = [];

  constructor(@Inject(AUCTION_CONFIG) private readonly config: AuctionConfig) {
    this.agent = new Agent({
      headersTimeout: config.TRACKER_TIMEOUT_MS,
      bodyTimeout: config.TRACKER_TIMEOUT_MS,
      connections: 32,
    });
    this.sweeper = setInterval(() => this.sweep(), Math.max(100, config.TRACKER_TIMEOUT_MS / 4));
    this.sweeper.unref();
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
      const { origin, pathname, search } = new URL(url);
      const call = new TrackerCall(this, kind);
      this.inFlight.add(call);
      this.agent.dispatch({ origin, path: `${pathname}${search}`, method: 'GET', headers: HEADERS }, call);
    }
  }

  ended(call: TrackerCall, result: 'ok' | 'http_error' | 'failed', error?: string): void {
    this.inFlight.delete(call);
    trackerCalls.inc({ kind: call.kind, result });
    if (error) {
      this.logger.debug(`${call.kind} call failed: ${error}`);
    }
    if (this.inFlight.size === 0) {
      const waiting = this.idle;
      this.idle = [];
      waiting.forEach((resolve) => resolve());
    }
  }

  /** Resolves when every call fired so far has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) {
      await new Promise<void>((resolve) => this.idle.push(resolve));
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.settled();
    clearInterval(this.sweeper);
    await this.agent.close();
  }

  private sweep(): void {
    const oldest = performance.now() - this.config.TRACKER_TIMEOUT_MS;
    for (const call of this.inFlight) {
      if (call.started < oldest) {
        call.expire();
      }
    }
  }
}
