import type { BookingRecord, GoalMetric, IncludeExcludeRecord, TargetingRecord } from '@app/catalog';
import { flightBound } from '@app/catalog';
import { HOUR_MS, instantOf, localDate, localMinute, nextMidnight } from './local-time';
import { ELIGIBLE, SkipReason, skipped, type BookingVerdict } from './booking-verdict';

/** What a booking is judged on: the slot's lineage, the tag and the reader. */
export interface BookingRequest {
  readonly nowMs: number;
  /** The publisher's IANA time zone: flights, days and daily goals are its. */
  readonly timeZone: string;
  readonly publisherId: string;
  readonly templateId: string;
  readonly adSlotId: string;
  readonly listId: string;
  readonly keyValues: readonly (readonly [string, string])[];
  readonly country: string;
  readonly region: string;
  readonly deviceType: string;
  readonly os: string;
  readonly browser: string;
  readonly emailDomain: string;
  readonly age: string;
  readonly gender: string;
  /** Who frequency caps count: the same reader across opens. */
  readonly readerKey: string;
  /** Exclusion groups of the ads already in this email (the open's other slots). */
  readonly exclusions?: ReadonlySet<string>;
}

/** One counter a delivery moves, and the most it may reach. */
export interface CounterLimit {
  readonly key: string;
  /** What one delivery adds: 1 impression, the price (spend), 0 (a clicks goal is only checked). */
  readonly amount: number;
  /** The counter may reach this after the delivery, never more. */
  readonly limit: number;
  readonly ttlMs: number;
  /** Why the delivery is refused when the limit would be passed. */
  readonly reason: SkipReason;
}

/** Stored counts by key: 0 for a key never counted. */
export type Counts = (key: string) => number;

const DAY_MS = 24 * HOUR_MS;
/** Counters outlive the flight by a month for the delivery report. */
const AFTER_FLIGHT_MS = 35 * DAY_MS;
const NO_END_TTL_MS = 400 * DAY_MS;

/**
 * Spend counts CPM micro-USD per impression: a thousandth of a micro-USD per unit, so that one
 * impression adds its strategy's whole `cpmMicros` and counts stay integers.
 */
const SPEND_SCALE = 1000;

type Matcher = (request: BookingRequest) => boolean;

function listMatcher(
  list: IncludeExcludeRecord | undefined,
  value: (r: BookingRequest) => string,
  fold = false,
): Matcher | undefined {
  if (!list) {
    return undefined;
  }
  const norm = (v: string) => (fold ? v.toLowerCase() : v);
  const include = list.include ? new Set(list.include.map(norm)) : undefined;
  const exclude = new Set((list.exclude ?? []).map(norm));
  return (r) => {
    const v = norm(value(r));
    return !exclude.has(v) && (!include || include.has(v));
  };
}

function targetingMatcher(t: TargetingRecord | undefined): Matcher {
  if (!t) {
    return () => true;
  }
  const rules: Matcher[] = [];
  const add = (m: Matcher | undefined) => m && rules.push(m);
  add(listMatcher(t.publishers, (r) => r.publisherId));
  add(listMatcher(t.templates, (r) => r.templateId));
  add(listMatcher(t.adSlots, (r) => r.adSlotId));
  add(listMatcher(t.lists, (r) => r.listId));
  add(listMatcher(t.countries, (r) => r.country));
  add(listMatcher(t.regions, (r) => (r.region ? `${r.country}-${r.region}` : ''), true));
  add(listMatcher(t.deviceTypes, (r) => r.deviceType));
  add(listMatcher(t.os, (r) => r.os, true));
  add(listMatcher(t.browsers, (r) => r.browser, true));
  add(listMatcher(t.emailDomains, (r) => r.emailDomain, true));
  if (t.ages) {
    const ages = new Set(t.ages);
    rules.push((r) => ages.has(r.age));
  }
  if (t.genders) {
    const genders = new Set(t.genders);
    rules.push((r) => genders.has(r.gender));
  }
  const kvRule = (key: string, values: readonly string[]) => {
    const set = new Set(values);
    return (r: BookingRequest) => r.keyValues.some(([k, v]) => k === key && set.has(v));
  };
  if (t.keyValuesAllOf) {
    const all = t.keyValuesAllOf.map((rule) => kvRule(rule.key, rule.values));
    rules.push((r) => all.every((m) => m(r)));
  }
  if (t.keyValuesAnyOf) {
    const any = t.keyValuesAnyOf.map((rule) => kvRule(rule.key, rule.values));
    rules.push((r) => any.some((m) => m(r)));
  }
  return (r) => rules.every((m) => m(r));
}

/**
 * One booking (a campaign's or a strategy's), compiled once per catalog: its flight as local
 * wall-clock bounds, its targeting as one predicate. `judge` and `limits` are pure: counts in,
 * verdict or counter limits out.
 */
export class BookedLayer {
  private readonly start: string;
  private readonly end: string;
  private readonly matches: Matcher;
  private readonly base: string;
  /** The flight's instants by time zone: the same few publishers ask again and again. */
  private readonly flights = new Map<string, { startMs: number; endMs: number }>();

  constructor(
    readonly scope: 'campaign' | 'strategy',
    readonly id: string,
    readonly booking: BookingRecord,
  ) {
    this.start = booking.start ? flightBound(booking.start, 'start') : '';
    this.end = booking.end ? flightBound(booking.end, 'end') : '';
    this.matches = targetingMatcher(booking.targeting);
    this.base = `${scope === 'campaign' ? 'c' : 's'}:${id}`;
  }

  inFlight(request: BookingRequest): boolean {
    const now = localMinute(request.nowMs, request.timeZone);
    return (!this.start || now >= this.start) && (!this.end || now < this.end);
  }

  targets(request: BookingRequest): boolean {
    return this.matches(request);
  }

  /** The flight's instants in the request's time zone (infinite where the booking leaves it open). */
  flight(timeZone: string): { startMs: number; endMs: number } {
    let flight = this.flights.get(timeZone);
    if (!flight) {
      flight = {
        startMs: this.start ? instantOf(this.start, timeZone) : Number.NEGATIVE_INFINITY,
        endMs: this.end ? instantOf(this.end, timeZone) : Number.POSITIVE_INFINITY,
      };
      this.flights.set(timeZone, flight);
    }
    return flight;
  }

  goalKey(metric: GoalMetric, period: 'life' | 'day' | 'hour', request: BookingRequest): string {
    switch (period) {
      case 'life':
        return `${this.base}:${metric}:life`;
      case 'day':
        return `${this.base}:${metric}:d:${localDate(request.nowMs, request.timeZone)}`;
      case 'hour':
        return `${this.base}:${metric}:h:${Math.floor(request.nowMs / HOUR_MS)}`;
    }
  }

  /** How long a lifetime counter lives: the flight, then a month for the delivery report. */
  lifetimeTtlMs(request: BookingRequest): number {
    const { endMs } = this.flight(request.timeZone);
    return Number.isFinite(endMs)
      ? Math.max(HOUR_MS, endMs - request.nowMs + AFTER_FLIGHT_MS)
      : NO_END_TTL_MS;
  }

  /**
   * Every counter one delivery to `request` at `priceMicros` moves, with its limit now: goals
   * (lifetime, daily), the hour's even-pacing budget, the reader's caps. The keys do not depend on
   * the counts, so `limits(r, p, () => 0)` lists what to read.
   */
  limits(request: BookingRequest, priceMicros: number, counts: Counts): CounterLimit[] {
    const b = this.booking;
    const out: CounterLimit[] = [];
    const { endMs, startMs } = this.flight(request.timeZone);
    const lifeTtl = this.lifetimeTtlMs(request);
    for (const goal of b.goals ?? []) {
      const scale = goal.metric === 'spend' ? SPEND_SCALE : 1;
      const amount = goal.metric === 'impressions' ? 1 : goal.metric === 'spend' ? priceMicros : 0;
      // A clicks goal is counted by clicks: a delivery only checks it is not yet reached.
      const limitOf = (target: number) => (goal.metric === 'clicks' ? target - 1 : target * scale);
      const life = this.goalKey(goal.metric, 'life', request);
      const day = this.goalKey(goal.metric, 'day', request);
      if (goal.lifetime !== undefined) {
        out.push({
          key: life,
          amount,
          limit: limitOf(goal.lifetime),
          ttlMs: lifeTtl,
          reason: SkipReason.GoalReached,
        });
      }
      if (goal.daily !== undefined) {
        out.push({
          key: day,
          amount,
          limit: limitOf(goal.daily),
          ttlMs: 2 * DAY_MS,
          reason: SkipReason.GoalReached,
        });
      }
      if (b.pacing === 'even' && goal.metric !== 'clicks') {
        const hour = this.goalKey(goal.metric, 'hour', request);
        const budget = this.hourBudget(request, counts, goal.lifetime, goal.daily, scale, {
          life,
          day,
          hour,
          startMs,
          endMs,
        });
        if (budget !== undefined) {
          out.push({ key: hour, amount, limit: budget, ttlMs: 2 * HOUR_MS, reason: SkipReason.Paced });
        }
      }
    }
    for (const cap of b.frequencyCaps ?? []) {
      const window =
        cap.period === 'hour'
          ? `h:${Math.floor(request.nowMs / HOUR_MS)}`
          : cap.period === 'day'
            ? `d:${localDate(request.nowMs, request.timeZone)}`
            : 'f';
      out.push({
        key: `${this.base}:cap:${request.readerKey}:${window}`,
        amount: 1,
        limit: cap.count,
        ttlMs: cap.period === 'hour' ? 2 * HOUR_MS : cap.period === 'day' ? 2 * DAY_MS : lifeTtl,
        reason: SkipReason.CapReached,
      });
    }
    return out;
  }

  /**
   * Even pacing: what is left of the goal when this hour began, spread over the flight's hours
   * left (this one included), so that an hour short of traffic is caught up by the hours after
   * it. A daily goal is spread over what is left of the day the same way. Partial first and last
   * hours get their share of an hour.
   */
  private hourBudget(
    request: BookingRequest,
    counts: Counts,
    lifetime: number | undefined,
    daily: number | undefined,
    scale: number,
    at: { life: string; day: string; hour: string; startMs: number; endMs: number },
  ): number | undefined {
    const hourStart = Math.floor(request.nowMs / HOUR_MS) * HOUR_MS;
    const from = Math.max(hourStart, at.startMs);
    const inHour = counts(at.hour);
    const share = (left: number, until: number) => {
      const span = until - from;
      const weight = Math.min(hourStart + HOUR_MS, until) - from;
      return span <= 0 || weight <= 0 ? 0 : Math.ceil((Math.max(0, left) * weight) / span);
    };
    let budget: number | undefined;
    if (lifetime !== undefined && Number.isFinite(at.endMs)) {
      budget = share(lifetime * scale - (counts(at.life) - inHour), at.endMs);
    }
    if (daily !== undefined) {
      const dayEnd = Math.min(at.endMs, nextMidnight(request.nowMs, request.timeZone));
      const forDay = share(daily * scale - (counts(at.day) - inHour), dayEnd);
      budget = budget === undefined ? forDay : Math.min(budget, forDay);
    }
    return budget;
  }

  /** The verdict on `request`, from stored counts: flight, targeting, exclusion, goals, pace, caps. */
  judge(request: BookingRequest, priceMicros: number, counts: Counts): BookingVerdict {
    if (!this.inFlight(request)) {
      return skipped(SkipReason.OutOfFlight);
    }
    if (!this.matches(request)) {
      return skipped(SkipReason.Targeting);
    }
    if (request.exclusions && this.booking.exclusionGroups?.some((g) => request.exclusions!.has(g))) {
      return skipped(SkipReason.Excluded);
    }
    return firstBreach(this.limits(request, priceMicros, counts), counts) ?? ELIGIBLE;
  }
}

/**
 * The verdict of the first limit a delivery would pass, goals before pace before caps (the order
 * `limits` lists them in); undefined when none.
 */
export function firstBreach(limits: readonly CounterLimit[], counts: Counts): BookingVerdict | undefined {
  const order = [SkipReason.GoalReached, SkipReason.Paced, SkipReason.CapReached];
  for (const reason of order) {
    if (limits.some((l) => l.reason === reason && counts(l.key) + l.amount > l.limit)) {
      return skipped(reason);
    }
  }
  return undefined;
}
