import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, type Dispatcher } from 'undici';
import { trackerCalls } from '@app/observability';
import { DspUrlGuard } from '@app/url-guard';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG, DSP_URL_GUARD } from '../auction.tokens';

/**
 * What a server-to-server call is: the win notice (`nurl`), the billing notice (`burl`, at the first
 * view), a loss notice (`lurl`), or a tracker of the markup (impression, click).
 */
export type TrackerKind = 'win_notice' | 'billing_notice' | 'loss_notice' | 'impression' | 'click';

/** How a call ended, or why it was not made: the `result` label of `adx_tracker_calls_total`. */
type TrackerResult = 'ok' | 'http_error' | 'failed' | 'forbidden_address';

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
    // The guard's lookup refused the addresses the host resolved to: no connection was made.
    this.end(DspUrlGuard.refusedConnection(error) ? 'forbidden_address' : 'failed', error.message);
  }

  expire(): void {
    this.end('failed', 'timeout');
    try {
      this.abortCall?.(new Error('tracker call timed out'));
    } catch {
      // Already ended.
    }
  }

  private end(result: TrackerResult, error?: string): void {
    if (!this.ended) {
      this.ended = true;
      this.dispatcher.ended(this, result, error);
    }
  }
}

/**
 * Fires notices and trackers server to server, after the answer to the viewer: never awaited by a
 * request, bounded in time and in calls in flight (beyond the bound a call is dropped and counted,
 * so that a slow tracker host cannot pile up sockets and memory). Every URL goes through the DSP
 * URL guard: one that is not plain http(s), or whose host is (or resolves to) an internal address,
 * is never called, only counted (`invalid_url`, `forbidden_address`).
 */
@Injectable()
export class TrackerDispatcher implements OnApplicationShutdown {
  private readonly logger = new Logger('Trackers');
  private readonly agent: Agent;
  private readonly inFlight = new Set<TrackerCall>();
  private readonly sweeper: NodeJS.Timeout;
  private idle: (() => void)[] = [];

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(DSP_URL_GUARD) private readonly guard: DspUrlGuard,
  ) {
    this.agent = new Agent({
      headersTimeout: config.TRACKER_TIMEOUT_MS,
      bodyTimeout: config.TRACKER_TIMEOUT_MS,
      connections: 32,
      connect: { ...guard.connect },
    });
    this.sweeper = setInterval(() => this.sweep(), Math.max(100, config.TRACKER_TIMEOUT_MS / 4));
    this.sweeper.unref();
  }

  fire(kind: TrackerKind, urls: readonly string[]): void {
    for (const url of urls) {
      const verdict = this.guard.check(url);
      if (!verdict.ok) {
        trackerCalls.inc({ kind, result: verdict.reason });
        continue;
      }
      if (this.inFlight.size >= this.config.TRACKER_MAX_IN_FLIGHT) {
        trackerCalls.inc({ kind, result: 'dropped' });
        continue;
      }
      const { origin, pathname, search } = verdict.target;
      const call = new TrackerCall(this, kind);
      this.inFlight.add(call);
      this.agent.dispatch({ origin, path: `${pathname}${search}`, method: 'GET', headers: HEADERS }, call);
    }
  }

  ended(call: TrackerCall, result: TrackerResult, error?: string): void {
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
