import {
  EMPTY_OPEN,
  SkipReason,
  openKey,
  skipped,
  type BookedStrategy,
  type BookingRequest,
  type BookingVerdict,
  type CounterLimit,
  type CountSnapshot,
  type OpenLedger,
  type OpenPlanEntry,
  type OpenState,
} from '@app/booking';
import { campaignSizes, roadblockTemplates, templateSlots, type Catalog } from '@app/catalog';
import { fnv1a32 } from '@app/events';
import { bookingSkips } from '@app/observability';
import type { AdContext } from './ad-context';
import { bookingRequestOf, type BookedDemand } from './booked-demand';
import type { Candidate } from './candidate';
import type { CatalogDemand } from './catalog-demand';

/** What the bookings make of one slot before its auction (docs/direct-campaigns.md). */
export interface DirectPlan {
  /** The direct candidates that go into the auction. */
  readonly paid: readonly Candidate[];
  /** Whether RTB bids may compete: not on a slot a takeover, a roadblock or a sponsorship owns. */
  readonly rtb: boolean;
  /** Whether house and fallback ads may fill the slot. */
  readonly fill: boolean;
  /** The open is a roadblock's: the slot serves its plan (counted with the reservation) or nothing. */
  readonly roadblocked: boolean;
  readonly request: BookingRequest;
  readonly counts: CountSnapshot;
  /** The email open's reservation, when the slot's demand needs it (a roadblock or exclusion groups). */
  readonly open?: { readonly key: string; readonly track: boolean };
}

/** What became of the auction's winner once its delivery and its open were claimed. */
export type Settlement =
  | { readonly kind: 'ok' }
  /** Left out (counted with its reason): decide again without it. */
  | { readonly kind: 'drop' }
  /** A roadblock took the open meanwhile: serve its candidate for this slot, or nothing. */
  | { readonly kind: 'serve'; readonly candidate?: Candidate };

const OK: Settlement = Object.freeze({ kind: 'ok' });
const DROP: Settlement = Object.freeze({ kind: 'drop' });

/** A takeover held back for one request (a cap, the hour's pace) still keeps its template from others. */
const HOLDING = new Set<string>([SkipReason.CapReached, SkipReason.Paced]);
/** A sponsorship that does not target the request takes no band of its share. */
const NOT_TARGETED = new Set<string>([
  SkipReason.OutOfFlight,
  SkipReason.Targeting,
  SkipReason.RoadblockIncomplete,
]);

/**
 * The bookings' priorities across a slot and its email open, between the catalog's candidates and
 * the auction: a roadblock holding the open serves its plan; a takeover in flight owns its template;
 * a sponsorship takes its share of the slot above every price; an exclusion group already shown in
 * the open keeps its rivals out. After the auction, `settle` claims the winner's delivery and the
 * open in one atomic step (a roadblock: every slot of the open at once).
 */
export class BookedPriority {
  private readonly slotsOf: ReturnType<typeof templateSlots>;
  private readonly advertiserOf = new Map<string, string>();
  /** By roadblock campaign: the templates it has a creative of every slot's size for. */
  private readonly roadblockFits = new Map<string, Set<string>>();
  /** By template: the roadblock strategies that may run on it. */
  private readonly roadblocksOn = new Map<string, BookedStrategy[]>();
  private readonly takenOver = new Set<string>();
  /** By sponsorship strategy: whose share it draws from (its own or its campaign's). */
  private readonly shareKey = new Map<string, string>();

  constructor(
    catalog: Catalog,
    private readonly booked: BookedDemand,
    private readonly demand: CatalogDemand,
    private readonly ledger: OpenLedger,
    /** How long an open's reservation lives: as long as its decisions. */
    private readonly openTtlMs: number,
  ) {
    const doc = catalog.document;
    this.slotsOf = templateSlots(doc);
    const sizes = campaignSizes(doc);
    for (const s of doc.strategies) {
      const advertiser = catalog.strategyLineage(s.id).advertiser;
      if (advertiser) {
        this.advertiserOf.set(s.id, advertiser.id);
      }
      if (s.booking?.sponsorshipShare !== undefined) {
        this.shareKey.set(s.id, `s:${s.id}`);
      }
    }
    for (const c of doc.campaigns) {
      if (c.campaignType === 'roadblock' && c.demandType === 'direct' && c.booking) {
        const fits = roadblockTemplates(doc, c.booking).filter((t) =>
          (this.slotsOf.get(t) ?? []).every((slot) => sizes.get(c.id)?.has(slot.size)),
        );
        this.roadblockFits.set(c.id, new Set(fits));
      }
    }
    for (const s of booked.desk.strategies) {
      for (const t of this.roadblockFits.get(s.campaignId) ?? []) {
        this.roadblocksOn.set(t, [...(this.roadblocksOn.get(t) ?? []), s]);
      }
      if (s.takeoverTemplateId) {
        this.takenOver.add(s.takeoverTemplateId);
      }
      if (s.priority === 'sponsorship' && !this.shareKey.has(s.strategyId)) {
        this.shareKey.set(s.strategyId, `c:${s.campaignId}`);
      }
    }
  }

  /**
   * Whether the bookings may take the slot from RTB (a takeover of its template, a roadblock that
   * may hold its open, a sponsorship among its candidates): then the plan is made before the DSPs
   * are asked, else beside them.
   */
  mayOwn(ctx: AdContext, paid: readonly Candidate[]): boolean {
    return (
      this.takenOver.has(ctx.template.id) ||
      this.roadblocksOn.has(ctx.template.id) ||
      paid.some((c) => this.shareKey.has(c.strategyId))
    );
  }

  /** The slot's plan: which direct candidates compete, and whether RTB and house may. */
  async prepare(ctx: AdContext, catalogPaid: readonly Candidate[]): Promise<DirectPlan> {
    const desk = this.booked.desk;
    const request = bookingRequestOf(ctx);
    const booked = catalogPaid.filter((c) => c.demandType === 'direct' && desk.of(c.strategyId));
    const track = (this.roadblocksOn.get(ctx.template.id) ?? []).some((s) =>
      s.layers.every((l) => l.inFlight(request)),
    );
    const grouped = booked.some((c) => desk.of(c.strategyId)!.exclusionGroups.length > 0);
    const key = track || grouped ? openKey(ctx.publisher.id, ctx.tag.placementId, ctx.viewer.userKey) : '';
    const [screen, state] = await Promise.all([
      booked.length > 0 ? desk.screen(booked, request) : { verdicts: [], counts: new Map<string, number>() },
      key ? this.ledger.read(key) : EMPTY_OPEN,
    ]);
    const base = { request, counts: screen.counts, open: key ? { key, track } : undefined };

    if (state.roadblock) {
      const planned = this.planned(state, ctx.slot.id);
      for (const c of booked) {
        if (c.strategyId !== planned?.strategyId) {
          skip(c, SkipReason.Roadblocked);
        }
      }
      return { ...base, paid: planned ? [planned] : [], rtb: false, fill: false, roadblocked: true };
    }

    const verdicts = new Map(
      booked.map((c, i) => [
        c,
        this.openRules(c, screen.verdicts[i], request, state, ctx.viewer.unrecognised),
      ]),
    );
    const left = new Set<Candidate>();
    const leave = (c: Candidate, reason: SkipReason) => {
      left.add(c);
      skip(c, reason);
    };
    for (const [c, v] of verdicts) {
      if (!v.eligible) {
        leave(c, v.reason);
      }
    }

    const takeover = booked.filter((c) => desk.of(c.strategyId)!.takeoverTemplateId === ctx.template.id);
    const serving = takeover.filter((c) => !left.has(c));
    const holding = takeover.some((c) => {
      const v = verdicts.get(c)!;
      return !v.eligible && HOLDING.has(v.reason);
    });
    if (serving.length > 0 || holding) {
      for (const c of booked) {
        if (!takeover.includes(c) && !left.has(c)) {
          leave(c, SkipReason.TakenOver);
        }
      }
      return { ...base, paid: serving, rtb: false, fill: serving.length === 0, roadblocked: false };
    }

    const sponsored = this.sponsorship(ctx, booked, verdicts, left);
    for (const c of booked) {
      if (this.shareKey.has(c.strategyId) && !left.has(c) && c !== sponsored) {
        leave(c, SkipReason.OutsideShare);
      }
    }
    if (sponsored) {
      return { ...base, paid: [sponsored], rtb: false, fill: true, roadblocked: false };
    }
    const paid = left.size === 0 ? catalogPaid : catalogPaid.filter((c) => !left.has(c));
    return { ...base, paid, rtb: true, fill: true, roadblocked: false };
  }

  /**
   * Claims the winner's delivery and the slot's part of its open, atomically (`undefined`: the
   * slot goes to no paid ad, which still closes the open to a roadblock). A roadblock winner
   * reserves every slot of the open with its plan, or is left out.
   */
  async settle(winner: Candidate | undefined, plan: DirectPlan, ctx: AdContext): Promise<Settlement> {
    if (plan.roadblocked) {
      return OK;
    }
    const desk = this.booked.desk;
    const s = winner?.demandType === 'direct' ? desk.of(winner.strategyId) : undefined;
    if (!plan.open) {
      return !winner || !s || (await this.booked.commit(winner, plan)) ? OK : DROP;
    }
    let limits = s ? desk.limits(winner!.strategyId, plan.request, winner!.priceMicros, plan.counts) : [];
    let roadblock: { campaignId: string; plan: ReadonlyMap<string, OpenPlanEntry> } | undefined;
    if (s?.roadblock) {
      const whole = await this.roadblockPlan(ctx, winner!, s, plan.request);
      if (!whole) {
        skip(winner!, SkipReason.RoadblockIncomplete);
        return DROP;
      }
      roadblock = { campaignId: s.campaignId, plan: whole.plan };
      limits = mergeLimits([...limits, ...whole.limits]);
    }
    const outcome = await this.ledger.claim(
      {
        key: plan.open.key,
        ttlMs: this.openTtlMs,
        advertiserId: s ? (this.advertiserOf.get(winner!.strategyId) ?? '') : '',
        roadblock,
        track: plan.open.track,
        groups: s?.exclusionGroups ?? [],
      },
      limits,
    );
    switch (outcome.kind) {
      case 'reserved':
        return OK;
      case 'limit':
        skip(winner!, limits[outcome.index].reason);
        return DROP;
      case 'open_taken':
        skip(winner!, SkipReason.OpenTaken);
        return DROP;
      case 'excluded':
        skip(winner!, SkipReason.Excluded);
        return DROP;
      case 'roadblocked': {
        const candidate = this.planned(outcome.state, ctx.slot.id);
        if (s && winner!.strategyId !== candidate?.strategyId) {
          skip(winner!, SkipReason.Roadblocked);
        }
        return { kind: 'serve', candidate };
      }
    }
  }

  /** The open's rules on one candidate's booking verdict: takeovers, roadblocks, exclusion. */
  private openRules(
    c: Candidate,
    verdict: BookingVerdict,
    request: BookingRequest,
    state: OpenState,
    unrecognised = false,
  ): BookingVerdict {
    if (!verdict.eligible) {
      return verdict;
    }
    const s = this.booked.desk.of(c.strategyId)!;
    if (s.takeoverTemplateId && s.takeoverTemplateId !== request.templateId) {
      return skipped(SkipReason.Targeting);
    }
    if (s.roadblock) {
      // A reader known by neither recipient nor cookie is a new reader in each slot: no open to hold.
      if (unrecognised || !this.roadblockFits.get(s.campaignId)?.has(request.templateId)) {
        return skipped(SkipReason.RoadblockIncomplete);
      }
      if (state.roadblock !== undefined || state.groups.size > 0) {
        return skipped(SkipReason.OpenTaken);
      }
    }
    const advertiser = this.advertiserOf.get(c.strategyId);
    if (s.exclusionGroups.some((g) => (state.groups.get(g) ?? advertiser) !== advertiser)) {
      return skipped(SkipReason.Excluded);
    }
    return verdict;
  }

  /**
   * The sponsorship whose band of the slot's requests this one falls in (a number in [0, 1) drawn
   * from the auction id; the sponsorships targeting the request take consecutive bands of their
   * share, by campaign and strategy), when it is eligible: its best-paying candidate.
   */
  private sponsorship(
    ctx: AdContext,
    booked: readonly Candidate[],
    verdicts: ReadonlyMap<Candidate, BookingVerdict>,
    left: ReadonlySet<Candidate>,
  ): Candidate | undefined {
    const bands = new Map<string, { share: number; candidates: Candidate[] }>();
    for (const c of booked) {
      const key = this.shareKey.get(c.strategyId);
      const v = verdicts.get(c)!;
      if (key && (v.eligible || !NOT_TARGETED.has(v.reason))) {
        const band = bands.get(key) ?? {
          share: this.booked.desk.of(c.strategyId)!.sponsorshipShare ?? 0,
          candidates: [],
        };
        band.candidates.push(c);
        bands.set(key, band);
      }
    }
    if (bands.size === 0) {
      return undefined;
    }
    const draw = fnv1a32(ctx.auctionId) / 2 ** 32;
    let from = 0;
    for (const key of [...bands.keys()].sort()) {
      const band = bands.get(key)!;
      if (draw < from + band.share) {
        return band.candidates.filter((c) => !left.has(c)).sort((a, b) => b.priceMicros - a.priceMicros)[0];
      }
      from += band.share;
    }
    return undefined;
  }

  /**
   * Every other slot of the template filled by the roadblock's campaign: its best-paying eligible
   * candidate of the slot's size (judged on that slot), with the counters its delivery moves; none
   * when one slot has no eligible candidate.
   */
  private async roadblockPlan(
    ctx: AdContext,
    winner: Candidate,
    s: BookedStrategy,
    request: BookingRequest,
  ): Promise<{ plan: Map<string, OpenPlanEntry>; limits: CounterLimit[] } | undefined> {
    const desk = this.booked.desk;
    const others = (this.slotsOf.get(ctx.template.id) ?? []).filter((slot) => slot.id !== ctx.slot.id);
    const picks = await Promise.all(
      others.map(async (slot) => {
        const own = this.demand
          .candidates(slot.size, `${slot.id}|${ctx.viewer.userKey}`)
          .paid.filter((c) => desk.of(c.strategyId)?.campaignId === s.campaignId);
        const slotRequest = { ...request, adSlotId: slot.id };
        const { verdicts, counts } = await desk.screen(own, slotRequest);
        const best = own
          .filter((_, i) => verdicts[i].eligible)
          .sort((a, b) => b.priceMicros - a.priceMicros)[0];
        return (
          best && { slot, best, limits: desk.limits(best.strategyId, slotRequest, best.priceMicros, counts) }
        );
      }),
    );
    if (picks.some((p) => !p)) {
      return undefined;
    }
    const plan = new Map<string, OpenPlanEntry>([
      [ctx.slot.id, { strategyId: winner.strategyId, creativeId: winner.creativeId }],
    ]);
    for (const p of picks) {
      plan.set(p.slot.id, { strategyId: p.best.strategyId, creativeId: p.best.creativeId });
    }
    return { plan, limits: picks.flatMap((p) => p.limits) };
  }

  private planned(state: OpenState, slotId: string): Candidate | undefined {
    const entry = state.plan.get(slotId);
    return entry && this.demand.candidateOf(entry.strategyId, entry.creativeId);
  }
}

function skip(c: Candidate, reason: SkipReason): void {
  bookingSkips.inc({ strategy: c.strategyId, reason });
}

/**
 * One roadblock's counters over all the slots of its open: goals and pace add every slot's
 * delivery; a frequency cap counts the roadblock once (one view of one email).
 */
export function mergeLimits(limits: readonly CounterLimit[]): CounterLimit[] {
  const byKey = new Map<string, CounterLimit>();
  for (const l of limits) {
    const seen = byKey.get(l.key);
    if (!seen) {
      byKey.set(l.key, l);
    } else {
      byKey.set(l.key, {
        ...seen,
        amount: l.reason === SkipReason.CapReached ? Math.max(seen.amount, l.amount) : seen.amount + l.amount,
        limit: Math.min(seen.limit, l.limit),
      });
    }
  }
  return [...byKey.values()];
}
