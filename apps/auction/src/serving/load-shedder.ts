import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { auctionsShed, eventLoopLag } from '@app/observability';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';

/** How often the event loop's lag is sampled, ms. */
const SAMPLE_MS = 10;
/** On a sample over the target, the share of auctions let through is cut by this factor... */
const DECREASE = 0.7;
/** ...and on one under it, raised by this much: from none to all in 200 ms of a quiet loop. */
const INCREASE = 0.05;

export enum ShedReason {
  /** The event loop runs late: answers would be read after their auction's timer. */
  Overload = 'overload',
  /** Too many auctions already wait for DSPs. */
  InFlight = 'in_flight',
}

/**
 * Decides whether a new auction may ask the DSPs. An event loop that runs behind fires the auctions' timers
 * late and reads the DSPs' answers later still, so that past saturation every auction waits longer and loses
 * more answers (the collapse measured in bench/journal/exchange.md). The loop's lag is sampled every 10 ms;
 * each sample over `AUCTION_SHED_LAG_MS` cuts the share of new auctions let through (multiplicatively), each
 * sample under it raises the share (additively), so that the share settles where the loop keeps up. A request
 * not let through is decided at once on direct, house and fallback demand (an ad, never an error) and counted
 * in `adx_auctions_shed_total`.
 */
@Injectable()
export class LoadShedder implements OnApplicationShutdown {
  private share = 1;
  private credit = 0;
  private rtbOnlyCredit = 0;
  private inFlight = 0;
  private lagMs = 0;
  private timer?: NodeJS.Timeout;

  constructor(@Inject(AUCTION_CONFIG) private readonly config: AuctionConfig) {
    if (config.AUCTION_SHED_LAG_MS > 0) {
      this.sample(performance.now());
    }
  }

  /**
   * True when the auction may ask the DSPs; then `release()` must follow when it is over. A slot
   * with no other demand of its size (`fallback` false) would be left empty without its auction:
   * it is let through more often (the square root of the share: 0.7 when a half of the others
   * go, 0.3 when a tenth do), and answered with the transparent pixel when shed.
   */
  admit(fallback: boolean): boolean {
    if (this.inFlight >= this.config.AUCTION_MAX_IN_FLIGHT) {
      auctionsShed.inc({ reason: ShedReason.InFlight });
      return false;
    }
    if (this.share < 1) {
      const due = fallback ? (this.credit += this.share) : (this.rtbOnlyCredit += Math.sqrt(this.share));
      if (due < 1) {
        auctionsShed.inc({ reason: ShedReason.Overload });
        return false;
      }
      if (fallback) {
        this.credit -= 1;
      } else {
        this.rtbOnlyCredit -= 1;
      }
    }
    this.inFlight += 1;
    return true;
  }

  release(): void {
    this.inFlight -= 1;
  }

  /** The share of new auctions let through now (1: all), and the last lag measured, ms. */
  state(): { share: number; lagMs: number; inFlight: number } {
    return { share: this.share, lagMs: this.lagMs, inFlight: this.inFlight };
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  private sample(expected: number): void {
    this.timer = setTimeout(() => {
      const now = performance.now();
      this.lagMs = Math.max(0, now - expected);
      eventLoopLag.observe(this.lagMs / 1000);
      this.share =
        this.lagMs > this.config.AUCTION_SHED_LAG_MS
          ? this.share * DECREASE
          : Math.min(1, this.share + INCREASE);
      this.sample(now + SAMPLE_MS);
    }, SAMPLE_MS);
    this.timer.unref();
  }
}
