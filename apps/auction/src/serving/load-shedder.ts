import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
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
/**
 * The loop's busy share past which it counts as saturated. A lag over the target while the loop
 * still idles part of the time comes from bursts (40 connections answered at once, a GC), which
 * it finishes with time to spare: only a busy loop is one that more auctions would slow down.
 */
const SATURATED = 0.9;
/** A request that waited this many times `AUCTION_SHED_LAG_MS` is late even on a loop not saturated. */
const LATE_ALONE = 4;

export enum ShedReason {
  /** The event loop is saturated and runs late: answers would be read after their auction's timer. */
  Overload = 'overload',
  /** `AUCTION_MAX_IN_FLIGHT` auctions already wait for DSPs. */
  InFlight = 'in_flight',
  /**
   * The request waited longer than `AUCTION_SHED_LAG_MS` before its auction could begin on a
   * saturated loop, or four times that in any case.
   */
  Late = 'late',
}

/**
 * Decides whether a new auction may ask the DSPs. An event loop that runs behind fires the
 * auctions' timers late and reads the DSPs' answers later still, so that past saturation every
 * auction waits longer and loses more answers (the collapse measured in
 * bench/journal/exchange.md). What an auction costs follows the auctions in flight, so those are
 * what is limited. Every 10 ms the loop's lag is sampled and its busy share (event loop
 * utilization) averaged over about `AUCTION_SHED_INTERVAL_MS`. A lag over `AUCTION_SHED_LAG_MS`
 * counts only while the loop is saturated (busy 90 % of the time or more): a loop that idles part
 * of the time lags from bursts it absorbs (reacting to those shed 95 % of the auctions of a
 * 40-connection closed loop the process carried). Then each late sample cuts the limit to 80 % of
 * the auctions in flight, and each sample on time, while the limit binds, raises it by 5 % (at
 * least one), never past `AUCTION_MAX_IN_FLIGHT`. A new auction past the limit is not run: the
 * request is decided at once on direct, house and fallback demand (an ad, never an error) and
 * counted in `adx_auctions_shed_total`. A slot whose only demand is RTB, which that would leave
 * empty, has half again the room (and gets the transparent pixel when shed). Apart from the limit,
 * a request that waited longer than the lag allowed between its read and its auction is shed too
 * (`late`) on a saturated loop, or four times that in any case: tmax runs from the read
 * (docs/exchange.md#load-shedding).
 */
@Injectable()
export class LoadShedder implements OnModuleInit, OnApplicationShutdown {
  private limit: number;
  private inFlight = 0;
  private lagMs = 0;
  /** The share of time the loop was busy, averaged over about `AUCTION_SHED_INTERVAL_MS`. */
  private busy = 0;
  private utilization = performance.eventLoopUtilization();
  private timer?: NodeJS.Timeout;

  constructor(@Inject(AUCTION_CONFIG) private readonly config: AuctionConfig) {
    this.limit = config.AUCTION_MAX_IN_FLIGHT;
  }

  /** Starts sampling the event loop (unless shedding is off). */
  onModuleInit(): void {
    if (this.config.AUCTION_SHED_LAG_MS > 0 && this.timer === undefined) {
      this.utilization = performance.eventLoopUtilization();
      this.sample(performance.now());
    }
  }

  /**
   * True when the auction may ask the DSPs; then `release()` must follow when it is over.
   * `fallback`: the slot has direct, house or fallback demand to show instead. `arrivedAt`: when
   * the request was read (`performance.now()`); one that has waited longer than the loop may lag
   * (`AUCTION_SHED_LAG_MS`) before its auction could begin (state lookups on a saturated loop) is
   * shed, whatever is in flight: its auction would end past tmax or cut the DSPs' time short.
   */
  admit(fallback: boolean, arrivedAt?: number): boolean {
    const max = this.config.AUCTION_MAX_IN_FLIGHT;
    const lateAfter = this.config.AUCTION_SHED_LAG_MS;
    if (lateAfter > 0 && arrivedAt !== undefined) {
      const now = performance.now();
      const waited = now - arrivedAt;
      if (waited > lateAfter * LATE_ALONE || (waited > lateAfter && this.saturated())) {
        auctionsShed.inc({ reason: ShedReason.Late });
        return false;
      }
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

  /**
   * The limit on auctions in flight now, the auctions in flight, the last lag measured (ms), the
   * loop's busy share of late, and whether that counts as saturated.
   */
  state(): { limit: number; inFlight: number; lagMs: number; busy: number; saturated: boolean } {
    return {
      limit: this.limit,
      inFlight: this.inFlight,
      lagMs: this.lagMs,
      busy: this.busy,
      saturated: this.saturated(),
    };
  }

  onApplicationShutdown(): void {
    clearTimeout(this.timer);
  }

  /** The loop has been busy nearly all the time over the last `AUCTION_SHED_INTERVAL_MS` or so. */
  private saturated(): boolean {
    return this.busy >= SATURATED;
  }

  /**
   * One sample of the loop: `lagMs`, how late the sampling timer ran; `busy`, the loop's busy share
   * since the previous sample, `elapsedMs` ago. Public for the tests, which feed samples of their own.
   */
  observe(lagMs: number, busy: number, elapsedMs: number): void {
    this.lagMs = lagMs;
    // The busy share averaged with a time constant of the interval.
    this.busy += (busy - this.busy) * Math.min(1, elapsedMs / this.config.AUCTION_SHED_INTERVAL_MS);
    const target = this.config.AUCTION_SHED_LAG_MS;
    if (lagMs > target && this.saturated()) {
      this.limit = Math.max(1, Math.min(this.limit, this.inFlight) * DECREASE);
    } else if (lagMs <= target && this.inFlight >= this.limit - 1) {
      this.limit = Math.min(
        this.config.AUCTION_MAX_IN_FLIGHT,
        this.limit + Math.max(1, this.limit * INCREASE),
      );
    }
  }

  private sample(expected: number): void {
    const previous = expected - SAMPLE_MS;
    this.timer = setTimeout(() => {
      const now = performance.now();
      const lagMs = Math.max(0, now - expected);
      eventLoopLag.observe(lagMs / 1000);
      const utilization = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(utilization, this.utilization).utilization;
      this.utilization = utilization;
      this.observe(lagMs, busy, now - previous);
      this.sample(now + SAMPLE_MS);
    }, SAMPLE_MS);
    this.timer.unref();
  }
}
