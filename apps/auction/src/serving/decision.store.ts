import { Inject, Injectable } from '@nestjs/common';
import type { AdvertiserRecord } from '@app/catalog';
import { STATE_STORE, type StateStore } from '@app/state-store';
import type { AdDecision } from '../core/ad-decision';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';

/** A view or click remembered for conversion attribution. */
export interface AttributionTouch {
  /** When, epoch milliseconds. */
  readonly at: number;
  readonly decision: AdDecision;
}

const HOUR_MS = 3_600_000;

/** Conversion windows of an advertiser without its own: 30 days after a click, a day after a view. */
const DEFAULT_WINDOW_HOURS = { click: 30 * 24, view: 24 } as const;

/** How long after a click or a view an advertiser's conversion is attributed to it, in hours. */
export function attributionWindowHours(advertiser: AdvertiserRecord, kind: 'click' | 'view'): number {
  return kind === 'click'
    ? (advertiser.postClickWindowHours ?? DEFAULT_WINDOW_HOURS.click)
    : (advertiser.postViewWindowHours ?? DEFAULT_WINDOW_HOURS.view);
}

/**
 * Decisions, first views and attribution touches in the state store. Every write two instances
 * could race on is a set-if-absent: one decision per (slot, placement, viewer), one first view.
 */
@Injectable()
export class DecisionStore {
  private readonly ttlMs: number;

  constructor(
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(AUCTION_CONFIG) config: AuctionConfig,
  ) {
    this.ttlMs = config.DECISION_TTL_HOURS * HOUR_MS;
  }

  async get(key: string): Promise<AdDecision | undefined> {
    const raw = await this.state.get(`decision:${key}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as AdDecision);
  }

  /** Keeps the decision unless another request kept one first; returns the one that is kept. */
  async keep(key: string, decision: AdDecision): Promise<{ decision: AdDecision; kept: boolean }> {
    if (await this.state.setIfAbsent(`decision:${key}`, JSON.stringify(decision), this.ttlMs)) {
      return { decision, kept: true };
    }
    return { decision: (await this.get(key)) ?? decision, kept: false };
  }

  /** True for the first view of a decision's ad, false for every later one (a reopen). */
  firstView(key: string): Promise<boolean> {
    return this.state.setIfAbsent(`seen:${key}`, '1', this.ttlMs);
  }

  async touch(
    kind: 'click' | 'view',
    advertiserId: string,
    userKeys: readonly string[],
    touch: AttributionTouch,
    windowHours: number,
  ): Promise<void> {
    const value = JSON.stringify(touch);
    await Promise.all(
      userKeys.map((userKey) =>
        this.state.set(`last-${kind}:${advertiserId}:${userKey}`, value, windowHours * HOUR_MS),
      ),
    );
  }

  async lastTouch(
    kind: 'click' | 'view',
    advertiserId: string,
    userKey: string,
  ): Promise<AttributionTouch | undefined> {
    const raw = await this.state.get(`last-${kind}:${advertiserId}:${userKey}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as AttributionTouch);
  }

  /** True the first time an advertiser reports an order id: a reloaded thank-you page counts once. */
  firstConversion(advertiserId: string, orderId: string, windowHours: number): Promise<boolean> {
    return this.state.setIfAbsent(`conversion:${advertiserId}:${orderId}`, '1', windowHours * HOUR_MS);
  }
}
