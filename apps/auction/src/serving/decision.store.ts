import { Inject, Injectable } from '@nestjs/common';
import type { AdvertiserRecord } from '@app/catalog';
import { STATE_STORE, type StateStore } from '@app/state-store';
import type { AdDecision } from '../core/ad-decision';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG } from '../auction.tokens';
import {
  creativeRefOf,
  decodeDecision,
  decodeTouch,
  digest,
  encodeCreative,
  encodeDecision,
  encodeTouch,
  type StoredDecision,
} from './decision.codec';

/** A view or click remembered for conversion attribution. */
export interface AttributionTouch {
  /** When, epoch milliseconds. */
  readonly at: number;
  readonly decision: AdDecision;
}

const HOUR_MS = 3_600_000;

/** Conversion windows of an advertiser without its own: 30 days after a click, a day after a view. */
const DEFAULT_WINDOW_HOURS = { click: 30 * 24, view: 24 } as const;

/**
 * A creative entry outlives the decisions that show it by this much: a process writes it again
 * (raising its TTL) when its own last write is older than this, and the decisions it wrote meanwhile
 * expire no later than that write plus their TTL.
 */
const CREATIVE_REFRESH_MS = HOUR_MS;
/** Bounds of the per-process maps of creative entries written and read (entries never change). */
const MAX_CREATIVES_REMEMBERED = 50_000;

/** How long after a click or a view an advertiser's conversion is attributed to it, in hours. */
export function attributionWindowHours(advertiser: AdvertiserRecord, kind: 'click' | 'view'): number {
  return kind === 'click'
    ? (advertiser.postClickWindowHours ?? DEFAULT_WINDOW_HOURS.click)
    : (advertiser.postViewWindowHours ?? DEFAULT_WINDOW_HOURS.view);
}

/** Keys by purpose, each a short digest of what it stands for (see `decision.codec.ts`). */
const KEYS = {
  decision: (ref: string) => `d:${ref}`,
  creative: (ref: string) => `k:${ref}`,
  seen: (ref: string) => `s:${ref}`,
  touch: (kind: 'click' | 'view', advertiserId: string, userKey: string) =>
    `${kind === 'click' ? 'c' : 'v'}:${digest(`${advertiserId}|${userKey}`)}`,
  conversion: (advertiserId: string, orderId: string) => `o:${advertiserId}:${orderId}`,
};

/**
 * Decisions, first views and attribution touches in the state store, each key with the TTL of its
 * purpose: a decision for the reopen window (`DECISION_TTL_HOURS`), raised to its advertiser's
 * view window and, once clicked, to its click window; a touch for its attribution window. Every
 * write two instances could race on is a set-if-absent: one decision per (slot, placement,
 * viewer), one first view.
 */
@Injectable()
export class DecisionStore {
  private readonly reopenMs: number;
  private readonly creativesWritten = new Map<string, number>();
  /** Digests of the decision keys of the requests in flight: a request reads, then keeps. */
  private readonly refs = new Map<string, string>();
  private readonly creativesRead = new Map<string, string>();

  constructor(
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(AUCTION_CONFIG) config: AuctionConfig,
  ) {
    this.reopenMs = config.DECISION_TTL_HOURS * HOUR_MS;
  }

  async get(key: string): Promise<StoredDecision | undefined> {
    return this.read(this.ref(key));
  }

  /**
   * Keeps the decision unless another request kept one first; returns the one that is kept.
   * `seen`: the request that made it shows it (an `/img`), so that its next view is a reopen.
   * `advertiser`: the winner's, whose view window the decision must outlive (its touches point here).
   */
  async keep(
    key: string,
    decision: AdDecision,
    seen: boolean,
    advertiser: AdvertiserRecord | undefined,
  ): Promise<{ stored: StoredDecision; kept: boolean }> {
    const ref = this.ref(key);
    const ttlMs = Math.max(
      this.reopenMs,
      advertiser ? attributionWindowHours(advertiser, 'view') * HOUR_MS : 0,
    );
    const creative = encodeCreative(decision);
    if (creative) {
      await this.keepCreative(creative.ref, creative.text, ttlMs + CREATIVE_REFRESH_MS);
    }
    const record = encodeDecision(decision, seen, creative?.ref ?? '');
    if (await this.state.setIfAbsent(KEYS.decision(ref), record, ttlMs)) {
      return { stored: { decision, seen, creativeRef: creative?.ref ?? '' }, kept: true };
    }
    const other = await this.read(ref);
    return { stored: other ?? { decision, seen, creativeRef: creative?.ref ?? '' }, kept: false };
  }

  /**
   * True for the first view of a decision's ad, false for every later one (a reopen). A decision
   * kept as seen answers without a write; one made by a click is claimed once, for as long as the
   * decision may live (`advertiser`'s longest window).
   */
  async firstView(
    key: string,
    stored: StoredDecision,
    advertiser: AdvertiserRecord | undefined,
  ): Promise<boolean> {
    if (stored.seen) {
      return false;
    }
    const windows = advertiser
      ? Math.max(attributionWindowHours(advertiser, 'view'), attributionWindowHours(advertiser, 'click'))
      : 0;
    return this.state.setIfAbsent(KEYS.seen(this.ref(key)), '1', Math.max(this.reopenMs, windows * HOUR_MS));
  }

  /**
   * Remembers a view or a click of the decision for each of the viewer's keys. A click makes the
   * decision (and its creative) live as long as the click's attribution window.
   */
  async touch(
    kind: 'click' | 'view',
    advertiserId: string,
    userKeys: readonly string[],
    decisionKey: string,
    stored: StoredDecision,
    at: number,
    windowHours: number,
  ): Promise<void> {
    const ref = this.ref(decisionKey);
    const windowMs = windowHours * HOUR_MS;
    const value = encodeTouch(ref, at);
    const writes = userKeys.map((userKey) =>
      this.state.set(KEYS.touch(kind, advertiserId, userKey), value, windowMs),
    );
    if (kind === 'click') {
      writes.push(this.state.extendTtl(KEYS.decision(ref), windowMs));
      if (stored.creativeRef) {
        writes.push(this.state.extendTtl(KEYS.creative(stored.creativeRef), windowMs + CREATIVE_REFRESH_MS));
      }
    }
    await Promise.all(writes);
  }

  async lastTouch(
    kind: 'click' | 'view',
    advertiserId: string,
    userKey: string,
  ): Promise<AttributionTouch | undefined> {
    const raw = await this.state.get(KEYS.touch(kind, advertiserId, userKey));
    if (raw === undefined) {
      return undefined;
    }
    const { decisionRef, at } = decodeTouch(raw);
    const stored = await this.read(decisionRef);
    return stored && { at, decision: stored.decision };
  }

  /** True the first time an advertiser reports an order id: a reloaded thank-you page counts once. */
  firstConversion(advertiserId: string, orderId: string, windowHours: number): Promise<boolean> {
    return this.state.setIfAbsent(KEYS.conversion(advertiserId, orderId), '1', windowHours * HOUR_MS);
  }

  private async read(ref: string): Promise<StoredDecision | undefined> {
    const record = await this.state.get(KEYS.decision(ref));
    if (record === undefined) {
      return undefined;
    }
    const creativeRef = creativeRefOf(record);
    return decodeDecision(record, creativeRef ? await this.creative(creativeRef) : undefined);
  }

  /** A creative entry, from this process's memory when it read or wrote it before. */
  private async creative(ref: string): Promise<string | undefined> {
    const known = this.creativesRead.get(ref);
    if (known !== undefined) {
      return known;
    }
    const text = await this.state.get(KEYS.creative(ref));
    if (text !== undefined) {
      this.remember(this.creativesRead, ref, text);
    }
    return text;
  }

  /**
   * Writes a creative entry unless this process wrote it within `CREATIVE_REFRESH_MS`; an entry
   * another wrote with a longer TTL (a clicked decision's) keeps it.
   */
  private async keepCreative(ref: string, text: string, ttlMs: number): Promise<void> {
    const now = Date.now();
    const written = this.creativesWritten.get(ref);
    if (written !== undefined && now - written < CREATIVE_REFRESH_MS) {
      return;
    }
    this.remember(this.creativesWritten, ref, now);
    this.remember(this.creativesRead, ref, text);
    if (!(await this.state.setIfAbsent(KEYS.creative(ref), text, ttlMs))) {
      await this.state.extendTtl(KEYS.creative(ref), ttlMs);
    }
  }

  private ref(key: string): string {
    let ref = this.refs.get(key);
    if (ref === undefined) {
      ref = digest(key);
      this.remember(this.refs, key, ref, 4096);
    }
    return ref;
  }

  private remember<V>(map: Map<string, V>, ref: string, value: V, max = MAX_CREATIVES_REMEMBERED): void {
    if (map.size >= max) {
      map.clear();
    }
    map.set(ref, value);
  }
}
