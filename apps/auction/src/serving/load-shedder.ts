import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { auctionsShed, eventLoopLag } from '@app/observability';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';

/** How often the event loop's lag is sampled, ms. */
const SAMPLE_MS = 10;
/** On a sample over the target, the limit falls to this share of the auctions then in flight... */
const DECREASE = 0.8;
/** ...and on one under it, while the limit binds, it rises by this share (at least one auction). */
const INCREASE = 0.05;
/** A slot whose only demand is RTB has this much more room under the limit (plus one). */
const RTB_ONLY_ROOM = 1.5;

export enum ShedReason {
  /** The event loop runs late: answers would be read after their auction's timer. */
  Overload = 'overload',
  /** `AUCTION_MAX_IN_FLIGHT` auctions already wait for DSPs. */
  InFlight = 'in_flight',
  /** The request waited longer than `AUCTION_SHED_LAG_MS` before its auction could begin. */
  Late = 'late',
}

/**
 * Decides whether a new auction may ask the DSPs. An event loop that runs behind fires the
 * auctions' timers late and reads the DSPs' answers later still, so that past saturation every
 * auction waits longer and loses more answers (the collapse measured in
 * bench/journal/exchange.md). What an auction costs follows the auctions in flight, so those are
 * what is limited: the loop's lag is sampled every 10 ms; a sample over `AUCTION_SHED_LAG_MS` cuts
 * the limit to 80 % of the auctions then in flight, a sample under it, while the limit binds, raises
 * it by 5 % (at least one), never past `AUCTION_MAX_IN_FLIGHT`. A new auction past the limit is not
 * run: the request is decided at once on direct, house and fallback demand (an ad, never an
 * error) and counted in `adx_auctions_shed_total`. A slot whose only demand is RTB, which that
 * would leave empty, has half again the room (and gets the transparent pixel when shed). Apart
 * from the limit, a request that waited longer than the lag allowed between its read and its
 * auction is shed too (`late`): tmax runs from the read (docs/exchange.md#load-shedding).
 */
@Injectable()
export class LoadShedder implements OnApplicationShutdown {
  private limit: number;
  private inFlight = 0;
  private lagMs = 0;
  private timer?: NodeJS.Timeout;

  constructor(@Inject(AUCTION_CONFIG) private readonly config: AuctionConfig) {
    this.limit = config.AUCTION_MAX_IN_FLIGHT;
    if (config.AUCTION_SHED_LAG_MS > 0) {
      this.sample(performance.now());
    }
  }

  /**
   * True when the auction may ask the DSPs; then `release()` must follow when it is over.
   * `fallback`: the slot has direct, house or fallback demand to show instead. `arrivedAt`: when
   * the request was read (`performance.now()`); one that has waited longer than the loop may lag
   * (`AUCTION_SHED_LAG_MS`) before its auction could begin (state lookups on a loop running late)
   * is shed, whatever is in flight: its auction would end past tmax or cut the DSPs' time short.
   */
  admit(fallback: boolean, arrivedAt?: number): boolean {
    const max = this.config.AUCTION_MAX_IN_FLIGHT;
    const lateAfter = this.config.AUCTION_SHED_LAG_MS;
    if (lateAfter > 0 && arrivedAt !== undefined && performance.now() - arrivedAt > lateAfter) {
      auctionsShed.inc({ reason: ShedReason.Late });
      return false;
    }
    const room = fallback ? this.limit : Math.min(max, this.limit * RTB_ONLY_ROOM + 1);
    if (this.inFlight >= room) {
      auctionsShed.inc({ reason: this.inFlight >= max ? ShedReason.InFlight : ShedReason.Overload });
      return false;
    }
    this.inFlight += 1;
    return true;
  }

  release(): void {
    this.inFlight -= 1;
  }

  /** The limit on auctions in flight now, the auctions in flight, and the last lag measured, ms. */
  state(): { limit: number; inFlight: number; lagMs: number } {
    return { limit: this.limit, inFlight: this.inFlight, lagMs: this.lagMs };
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  private sample(expected: number): void {
    this.timer = setTimeout(() => {
      const now = performance.now();
      this.lagMs = Math.max(0, now - expected);
      eventLoopLag.observe(this.lagMs / 1000);
      if (this.lagMs > this.config.AUCTION_SHED_LAG_MS) {
        this.limit = Math.max(1, Math.min(this.limit, this.inFlight) * DECREASE);
      } else if (this.inFlight >= this.limit - 1) {
        this.limit = Math.min(
          this.config.AUCTION_MAX_IN_FLIGHT,
          this.limit + Math.max(1, this.limit * INCREASE),
        );
      }
      this.sample(now + SAMPLE_MS);
    }, SAMPLE_MS);
    this.timer.unref();
  }
}
