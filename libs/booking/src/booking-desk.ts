import type { BookingPriority, Catalog, GoalMetric } from '@app/catalog';
import { BookedLayer, type BookingRequest, type CounterLimit } from './booked-layer';
import { ELIGIBLE, skipped, type BookingVerdict } from './booking-verdict';
import type { DeliveryCounters } from './delivery-counters.port';
import { HOUR_MS } from './local-time';

/** A strategy's bookings: its campaign's, then its own; and how it takes part in an auction. */
export interface BookedStrategy {
  readonly strategyId: string;
  readonly campaignId: string;
  readonly layers: readonly BookedLayer[];
  readonly priority: BookingPriority;
  readonly sponsorshipShare?: number;
  readonly exclusionGroups: readonly string[];
  /** A booked roadblock: every slot of one open, or none. */
  readonly roadblock: boolean;
  /** A booked takeover: the template it owns during its flight. */
  readonly takeoverTemplateId?: string;
}

/** Counts read for one request, reused when the winner is committed. */
export type CountSnapshot = ReadonlyMap<string, number>;

/** A goal's delivery against its target and its even pace, for the delivery endpoint. */
export interface GoalDelivery {
  readonly metric: GoalMetric;
  readonly lifetime?: number;
  readonly daily?: number;
  readonly deliveredLifetime: number;
  /**
   * Delivered today (the booking's day), for a goal with a daily target: only those count their
   * day (a day counter on every goal would cost every delivery a write).
   */
  readonly deliveredToday?: number;
  /** Even pacing: what the flight should have delivered by now (straight line over the flight). */
  readonly expectedByNow?: number;
  /** delivered / expected (1 on pace, below 1 behind). */
  readonly pace?: number;
}

export interface LayerDelivery {
  readonly scope: 'campaign' | 'strategy';
  readonly id: string;
  readonly start?: string;
  readonly end?: string;
  readonly timeZone: string;
  readonly pacing: 'even' | 'asap';
  readonly goals: readonly GoalDelivery[];
}

/** Spend is counted in thousandths of a micro-USD (one impression adds the CPM); reported in micro-USD. */
const SPEND_SCALE = 1000;

/**
 * The catalog's bookings, judged against each request and committed atomically to the delivery
 * counters. `screen` reads the counts once and judges every booked candidate (no exception: a
 * verdict each); `commit` reserves the winner's delivery on every counter at once and answers
 * with the reason when another process took the last of a goal, a cap or the hour's pace first.
 */
export class BookingDesk {
  private readonly booked = new Map<string, BookedStrategy>();

  constructor(
    private readonly catalog: Catalog,
    private readonly counters: DeliveryCounters,
  ) {
    const campaignLayers = new Map<string, BookedLayer>();
    for (const c of catalog.document.campaigns) {
      if (c.booking) {
        campaignLayers.set(c.id, new BookedLayer('campaign', c.id, c.booking));
      }
    }
    for (const s of catalog.document.strategies) {
      const campaign = catalog.campaigns.get(s.campaignId);
      const outer = campaignLayers.get(s.campaignId);
      const layers = [outer, s.booking && new BookedLayer('strategy', s.id, s.booking)].filter(
        (l): l is BookedLayer => l !== undefined,
      );
      if (!campaign || layers.length === 0) {
        continue;
      }
      const priority = s.booking?.priority ?? campaign.booking?.priority ?? 'standard';
      this.booked.set(s.id, {
        strategyId: s.id,
        campaignId: campaign.id,
        layers,
        priority,
        sponsorshipShare: s.booking?.sponsorshipShare ?? campaign.booking?.sponsorshipShare,
        exclusionGroups: [
          ...new Set([...(campaign.booking?.exclusionGroups ?? []), ...(s.booking?.exclusionGroups ?? [])]),
        ],
        roadblock: campaign.campaignType === 'roadblock' && campaign.booking !== undefined,
        takeoverTemplateId: campaign.booking?.takeoverTemplateId,
      });
    }
  }

  /** The strategy's booking; undefined for a strategy booked on neither itself nor its campaign. */
  of(strategyId: string): BookedStrategy | undefined {
    return this.booked.get(strategyId);
  }

  get strategies(): Iterable<BookedStrategy> {
    return this.booked.values();
  }

  /** The limits a delivery of the strategy moves, campaign's and strategy's. */
  limits(
    strategyId: string,
    request: BookingRequest,
    priceMicros: number,
    counts: CountSnapshot,
  ): CounterLimit[] {
    const get = (k: string) => counts.get(k) ?? 0;
    return (this.booked.get(strategyId)?.layers ?? []).flatMap((l) => l.limits(request, priceMicros, get));
  }

  /**
   * Verdicts on the candidates (strategy and price), one counter read for all: a strategy without
   * a booking is eligible.
   */
  async screen(
    candidates: readonly { readonly strategyId: string; readonly priceMicros: number }[],
    request: BookingRequest,
  ): Promise<{ verdicts: BookingVerdict[]; counts: CountSnapshot }> {
    const verdicts: (BookingVerdict | undefined)[] = [];
    const keys = new Set<string>();
    const zero = () => 0;
    for (const c of candidates) {
      const booked = this.booked.get(c.strategyId);
      if (!booked) {
        verdicts.push(ELIGIBLE);
        continue;
      }
      // Flight, targeting and exclusion need no counts: a candidate they rule out costs no read.
      const early = booked.layers.map((l) => l.judge(request, c.priceMicros, zero)).find((v) => !v.eligible);
      if (early && !early.eligible && !COUNTED.has(early.reason)) {
        verdicts.push(early);
        continue;
      }
      verdicts.push(undefined);
      for (const layer of booked.layers) {
        for (const l of layer.limits(request, c.priceMicros, zero)) {
          keys.add(l.key);
        }
      }
    }
    const list = [...keys];
    const values = list.length > 0 ? await this.counters.read(list) : [];
    const counts = new Map(list.map((k, i) => [k, values[i]]));
    const get = (k: string) => counts.get(k) ?? 0;
    return {
      verdicts: verdicts.map((v, i) => {
        if (v) {
          return v;
        }
        const { strategyId, priceMicros } = candidates[i];
        const layers = this.booked.get(strategyId)!.layers;
        return layers.map((l) => l.judge(request, priceMicros, get)).find((x) => !x.eligible) ?? ELIGIBLE;
      }),
      counts,
    };
  }

  /**
   * Counts one delivery of the strategy, atomically against every goal, pace and cap: eligible
   * when counted, else the reason of the limit it would have passed.
   */
  async commit(
    strategyId: string,
    request: BookingRequest,
    priceMicros: number,
    counts: CountSnapshot,
  ): Promise<BookingVerdict> {
    const limits = this.limits(strategyId, request, priceMicros, counts);
    if (limits.length === 0) {
      return ELIGIBLE;
    }
    const failed = await this.counters.reserve(limits);
    return failed < 0 ? ELIGIBLE : skipped(limits[failed].reason);
  }

  /**
   * A click on a booked ad, counted towards its clicks goals (campaign's and strategy's) once per
   * `decisionId`: the ad of one slot of one email for one reader, however often it is clicked (a
   * second click is the same reader's interest, not a new one). True when counted; false when the
   * decision's click was counted before or the strategy has no clicks goal.
   */
  countClick(strategyId: string, request: BookingRequest, decisionId: string): Promise<boolean> {
    const adds: { key: string; amount: number; ttlMs: number }[] = [];
    for (const layer of this.booked.get(strategyId)?.layers ?? []) {
      for (const goal of layer.booking.goals ?? []) {
        if (goal.metric === 'clicks') {
          adds.push(
            { key: layer.goalKey('clicks', 'life', request), amount: 1, ttlMs: layer.lifetimeTtlMs(request) },
            { key: layer.goalKey('clicks', 'day', request), amount: 1, ttlMs: 2 * DAY_MS },
          );
        }
      }
    }
    if (adds.length === 0) {
      return Promise.resolve(false);
    }
    return this.counters.addOnce(`click:${strategyId}:${decisionId}`, CLICK_ONCE_TTL_MS, adds);
  }

  /** Each booked layer with goals: delivery against goal and, for even pacing, against pace. */
  async delivery(nowMs: number): Promise<LayerDelivery[]> {
    const layers = new Map<string, BookedLayer>();
    for (const s of this.booked.values()) {
      for (const l of s.layers) {
        layers.set(`${l.scope}:${l.id}`, l);
      }
    }
    const out: LayerDelivery[] = [];
    for (const layer of layers.values()) {
      const goals = layer.booking.goals ?? [];
      if (goals.length === 0) {
        continue;
      }
      const timeZone = this.timeZoneOf(layer);
      const request = { nowMs, timeZone } as BookingRequest;
      const keys = goals.flatMap((g) => [
        layer.goalKey(g.metric, 'life', request),
        layer.goalKey(g.metric, 'day', request),
      ]);
      const values = await this.counters.read(keys);
      const { startMs, endMs } = layer.flight(timeZone);
      const elapsed =
        Number.isFinite(startMs) && Number.isFinite(endMs)
          ? Math.min(1, Math.max(0, (nowMs - startMs) / (endMs - startMs)))
          : undefined;
      out.push({
        scope: layer.scope,
        id: layer.id,
        start: layer.booking.start,
        end: layer.booking.end,
        timeZone,
        pacing: layer.booking.pacing ?? 'asap',
        goals: goals.map((g, i) => {
          const scale = g.metric === 'spend' ? SPEND_SCALE : 1;
          const deliveredLifetime = Math.floor(values[2 * i] / scale);
          const expectedByNow =
            layer.booking.pacing === 'even' && g.lifetime !== undefined && elapsed !== undefined
              ? Math.round(g.lifetime * elapsed)
              : undefined;
          return {
            metric: g.metric,
            lifetime: g.lifetime,
            daily: g.daily,
            deliveredLifetime,
            deliveredToday: g.daily !== undefined ? Math.floor(values[2 * i + 1] / scale) : undefined,
            expectedByNow,
            pace: expectedByNow ? Math.round((deliveredLifetime / expectedByNow) * 1000) / 1000 : undefined,
          };
        }),
      });
    }
    return out;
  }

  /** A layer's day is its first targeted publisher's (UTC when it targets none). */
  private timeZoneOf(layer: BookedLayer): string {
    const publisherId = layer.booking.targeting?.publishers?.include?.[0];
    return (publisherId && this.catalog.publishers.get(publisherId)?.timeZone) || 'UTC';
  }
}

const DAY_MS = 24 * HOUR_MS;
/**
 * A decision's click is remembered as counted this long: longer than any decision lives (its
 * advertiser's click window, 30 days by default), so that a late second click is not counted.
 */
const CLICK_ONCE_TTL_MS = 90 * DAY_MS;

/** Reasons that depend on counts: judged after the counter read. */
const COUNTED = new Set(['goal_reached', 'paced', 'cap_reached']);
