import { randomUUID } from 'node:crypto';
import { MemoryDeliveryCounters, MemoryOpenLedger, SkipReason } from '@app/booking';
import { buildCatalog, loadCatalog, type Catalog } from '@app/catalog';
import { bookingSkips } from '@app/observability';
import { withoutBookings } from '@app/testing';
import { describe, expect, it } from 'vitest';
import type { AdContext } from './ad-context';
import { testAdContext } from './ad-context.testing';
import { decideAuction } from './auction';
import { BookedDemand } from './booked-demand';
import { BookedPriority, mergeLimits, type DirectPlan } from './booked-priority';
import type { Candidate } from './candidate';
import { CatalogDemand } from './catalog-demand';

type Doc = Record<string, Record<string, unknown>[]>;

/** The demo catalog without its own bookings, with this test's bookings and prices (`edit`). */
function world(edit: (doc: Doc) => void) {
  const doc = JSON.parse(JSON.stringify(loadCatalog().document)) as Doc;
  withoutBookings(doc as Parameters<typeof withoutBookings>[0]);
  edit(doc);
  const catalog = buildCatalog(doc);
  const counters = new MemoryDeliveryCounters(() => NOW.getTime());
  const demand = new CatalogDemand(catalog, (c) => `https://ads.test/${c.id}.svg`);
  const booked = new BookedDemand(catalog, counters);
  const ledger = new MemoryOpenLedger(counters, () => NOW.getTime());
  return {
    catalog,
    demand,
    priority: new BookedPriority(catalog, booked, demand, ledger, 3_600_000),
    counters,
  };
}
type World = ReturnType<typeof world>;

const NOW = new Date('2026-03-10T12:00:00Z');
const campaign = (doc: Doc, id: string) => doc.campaigns.find((c) => c.id === id)!;
const strategy = (doc: Doc, id: string) => doc.strategies.find((s) => s.id === id)!;

function ctxOf(catalog: Catalog, slotId: string, reader: string, placement = 'drop-1'): AdContext {
  const ctx = testAdContext(catalog, slotId, { userKey: `r:${reader}` });
  // A new auction id each request: the sponsorship's draw.
  return {
    ...ctx,
    auctionId: randomUUID(),
    now: NOW,
    tag: { ...ctx.tag, placementId: placement, recipient: reader },
  };
}

/** An RTB bid above every direct price. */
const rtbBid: Candidate = {
  demandType: 'exchange',
  priceMicros: 50_000_000,
  strategyId: '',
  creativeId: 'rtb-1',
  advertiserDomain: 'bidder.example',
  rtb: { dspId: 'dsp-1' } as Candidate['rtb'],
};

/**
 * One slot decided as AuctionService.decide does it: the plan, the auction, the claim of the winner,
 * decided again without a winner left out, the roadblock's plan served when one took the open.
 */
async function serve(w: World, ctx: AdContext, bid: Candidate | null = rtbBid, planned?: DirectPlan) {
  const catalogDemand = w.demand.candidates(ctx.slot.size, `${ctx.slot.id}|${ctx.viewer.userKey}`);
  let plan = planned ?? (await w.priority.prepare(ctx, catalogDemand.paid));
  const first = plan;
  let paid: readonly Candidate[] = [...plan.paid, ...(plan.rtb && bid ? [bid] : [])];
  let fill = plan.fill ? catalogDemand.fill : [];
  for (;;) {
    const outcome = decideAuction(paid, fill, 2, (pool) => pool[0]);
    const settled = await w.priority.settle(outcome.filled ? outcome.winner : undefined, plan, ctx);
    if (settled.kind === 'drop' && outcome.filled) {
      paid = paid.filter((c) => c !== outcome.winner);
      continue;
    }
    if (settled.kind === 'serve') {
      paid = settled.candidate ? [settled.candidate] : [];
      fill = [];
      plan = { ...plan, roadblocked: true };
      continue;
    }
    return { winner: outcome.filled ? outcome.winner : undefined, plan: first };
  }
}

const campaignOf = (w: World, c: Candidate | undefined) =>
  c && w.catalog.strategyLineage(c.strategyId).campaign?.id;
const advertiserOf = (w: World, c: Candidate | undefined) =>
  c && w.catalog.strategyLineage(c.strategyId).advertiser?.id;
const skips = async (strategyPrefix: string, reason: string) =>
  (await bookingSkips.get()).values
    .filter((v) => String(v.labels.strategy).startsWith(strategyPrefix) && v.labels.reason === reason)
    .reduce((sum, v) => sum + v.value, 0);

const TPL_1_1 = ['slot-1-1-1', 'slot-1-1-2', 'slot-1-1-3'];

/** cmp-6-1-2 (adv-6), a roadblock of tpl-1-1 at the top price: 600x200, 300x250 (and 728x90). */
function roadblockWorld(booking: Record<string, unknown> = {}, edit?: (doc: Doc) => void) {
  return world((doc) => {
    campaign(doc, 'cmp-6-1-2').booking = { targeting: { publishers: { include: ['pub-1'] } }, ...booking };
    strategy(doc, 'str-6-1-2-1').cpmMicros = 9_000_000;
    strategy(doc, 'str-6-1-2-2').cpmMicros = 9_500_000;
    edit?.(doc);
  });
}

describe('roadblocks: one advertiser in every slot of an open, or none of it', () => {
  it('fills every slot of the open from the first slot decided, without asking RTB for the others', async () => {
    const w = roadblockWorld({ goals: [{ metric: 'impressions', lifetime: 100 }] });
    // The roadblock competes at its price on the first slot; the others are its own.
    const first = await serve(w, ctxOf(w.catalog, 'slot-1-1-2', 'reader-1'), null);
    expect(campaignOf(w, first.winner)).toBe('cmp-6-1-2');
    for (const slotId of ['slot-1-1-1', 'slot-1-1-3']) {
      const other = await serve(w, ctxOf(w.catalog, slotId, 'reader-1'));
      expect(campaignOf(w, other.winner)).toBe('cmp-6-1-2');
      expect(other.plan.rtb).toBe(false);
      expect(other.plan.roadblocked).toBe(true);
    }
    // One impression per slot of the template went on the goal at the reservation.
    expect(w.counters.value('c:cmp-6-1-2:impressions:life')).toBe(3);
  });

  it('holds all or none when the slots of many opens are decided at once', async () => {
    // In `rival`, adv-1's str-1-1-1-1 outbids the roadblock on 600x200: whichever slot is claimed first decides.
    const alone = roadblockWorld();
    const rival = roadblockWorld({}, (doc) => (strategy(doc, 'str-1-1-1-1').cpmMicros = 9_800_000));
    let whole = 0;
    let none = 0;
    for (let r = 0; r < 30; r += 1) {
      const w = r % 2 === 0 ? alone : rival;
      // The slots in another order each round.
      const order = [...TPL_1_1.slice(r % 3), ...TPL_1_1.slice(0, r % 3)];
      const winners = await Promise.all(
        order.map((slotId) => serve(w, ctxOf(w.catalog, slotId, `race-${r}`), null)),
      );
      const roadblock = winners.filter((x) => campaignOf(w, x.winner) === 'cmp-6-1-2').length;
      expect([0, 3]).toContain(roadblock);
      if (roadblock === 3) {
        whole += 1;
      } else {
        none += 1;
      }
    }
    expect(whole).toBeGreaterThan(0);
    expect(none).toBeGreaterThan(0);
  });

  it('serves the roadblock in a slot decided for a rival while the roadblock took the open', async () => {
    // adv-1's str-1-1-1-2 outbids the roadblock on 300x250 only; the roadblock keeps 600x200.
    const w = roadblockWorld({}, (doc) => (strategy(doc, 'str-1-1-1-2').cpmMicros = 9_800_000));
    const late = ctxOf(w.catalog, 'slot-1-1-2', 'reader-15');
    const lateDemand = w.demand.candidates(late.slot.size, `${late.slot.id}|${late.viewer.userKey}`);
    // The 300x250 slot is planned on an open no slot has shown yet...
    const plan = await w.priority.prepare(late, lateDemand.paid);
    expect(plan.roadblocked).toBe(false);
    // ...then the 600x200 slot's roadblock reserves the open before the 300x250 slot's claim.
    const first = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-15'), null);
    expect(campaignOf(w, first.winner)).toBe('cmp-6-1-2');
    const { winner } = await serve(w, late, null, plan);
    expect(campaignOf(w, winner)).toBe('cmp-6-1-2');
  });

  it('is left out of an open that already shows another ad (open_taken)', async () => {
    const w = roadblockWorld({}, (doc) => (strategy(doc, 'str-1-1-1-1').cpmMicros = 9_800_000));
    const before = await skips('str-6-1-2', SkipReason.OpenTaken);
    const first = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-2'), null);
    expect(campaignOf(w, first.winner)).toBe('cmp-1-1-1');
    for (const slotId of ['slot-1-1-2', 'slot-1-1-3']) {
      expect(campaignOf(w, (await serve(w, ctxOf(w.catalog, slotId, 'reader-2'))).winner)).not.toBe(
        'cmp-6-1-2',
      );
    }
    expect(await skips('str-6-1-2', SkipReason.OpenTaken)).toBeGreaterThanOrEqual(before + 2);
  });

  it('runs only on a template it has every size for (roadblock_incomplete elsewhere)', async () => {
    const w = roadblockWorld();
    const before = await skips('str-6-1-2-2', SkipReason.RoadblockIncomplete);
    // tpl-1-2 has a 320x50 slot the roadblock has no creative for; its 728x90 creative would fit the other.
    const { winner } = await serve(w, ctxOf(w.catalog, 'slot-1-2-1', 'reader-3'), null);
    expect(campaignOf(w, winner)).not.toBe('cmp-6-1-2');
    expect(await skips('str-6-1-2-2', SkipReason.RoadblockIncomplete)).toBe(before + 1);
  });

  it('is not chosen for a reader known by neither recipient nor cookie (each slot would be an open of its own)', async () => {
    const w = roadblockWorld();
    const ctx = ctxOf(w.catalog, 'slot-1-1-1', 'reader-16');
    const { winner } = await serve(w, { ...ctx, viewer: { ...ctx.viewer, unrecognised: true } }, null);
    expect(campaignOf(w, winner)).not.toBe('cmp-6-1-2');
    const known = ctxOf(w.catalog, 'slot-1-1-1', 'reader-17');
    expect(campaignOf(w, (await serve(w, known, null)).winner)).toBe('cmp-6-1-2');
  });

  it('is not chosen when another slot of the open has no eligible creative of it (strategy flown elsewhere)', async () => {
    // str-6-1-2-1 holds the only 600x200 creative; its own flight is over.
    const w = roadblockWorld({ start: '2026-03-01', end: '2026-03-31' }, (doc) => {
      strategy(doc, 'str-6-1-2-1').booking = { end: '2026-03-05' };
    });
    const { winner } = await serve(w, ctxOf(w.catalog, 'slot-1-1-2', 'reader-4'), null);
    expect(campaignOf(w, winner)).not.toBe('cmp-6-1-2');
    const rest = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-4'), null);
    expect(campaignOf(w, rest.winner)).not.toBe('cmp-6-1-2');
  });

  it('counts a frequency cap once per open and a goal per slot', async () => {
    const w = roadblockWorld({
      goals: [{ metric: 'impressions', lifetime: 5 }],
      frequencyCaps: [{ count: 1, period: 'day' }],
    });
    for (const slotId of TPL_1_1) {
      const { winner } = await serve(w, ctxOf(w.catalog, slotId, 'reader-5'), null);
      expect(campaignOf(w, winner)).toBe('cmp-6-1-2');
    }
    // The same reader's next email: capped.
    const next = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-5', 'drop-2'));
    expect(campaignOf(w, next.winner)).not.toBe('cmp-6-1-2');
    // Another reader: 3 impressions would pass the goal of 5 (3 delivered): left out whole.
    const other = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-6'));
    expect(campaignOf(w, other.winner)).not.toBe('cmp-6-1-2');
    expect(w.counters.value('c:cmp-6-1-2:impressions:life')).toBe(3);
  });

  it('merges an open’s counters: goals add up, a cap counts one view', () => {
    const limit = { limit: 10, ttlMs: 1 };
    expect(
      mergeLimits([
        { key: 'goal', amount: 1, reason: SkipReason.GoalReached, ...limit },
        { key: 'cap', amount: 1, reason: SkipReason.CapReached, ...limit },
        { key: 'goal', amount: 1, reason: SkipReason.GoalReached, ...limit, limit: 8 },
        { key: 'cap', amount: 1, reason: SkipReason.CapReached, ...limit },
      ]).map((l) => [l.key, l.amount, l.limit]),
    ).toEqual([
      ['goal', 2, 8],
      ['cap', 1, 10],
    ]);
  });
});

/** cmp-5-1-1 (adv-5) takes over tpl-1-1 on 2026-03-10; cmp-1-1-1 is booked standard demand. */
function takeoverWorld(booking: Record<string, unknown> = {}) {
  return world((doc) => {
    campaign(doc, 'cmp-5-1-1').booking = {
      takeoverTemplateId: 'tpl-1-1',
      start: '2026-03-10',
      end: '2026-03-10',
      ...booking,
    };
    campaign(doc, 'cmp-1-1-1').booking = {};
    strategy(doc, 'str-1-1-1-1').cpmMicros = 20_000_000;
  });
}

describe('takeovers: a template owned for the flight', () => {
  it('leaves no other demand on the template, RTB included', async () => {
    const w = takeoverWorld();
    const before = await skips('str-1-1-1', SkipReason.TakenOver);
    for (const slotId of TPL_1_1) {
      const { winner, plan } = await serve(w, ctxOf(w.catalog, slotId, 'reader-7'));
      expect(campaignOf(w, winner)).toBe('cmp-5-1-1');
      expect(plan.rtb).toBe(false);
    }
    expect(await skips('str-1-1-1', SkipReason.TakenOver)).toBeGreaterThan(before);
  });

  it('runs on its template only', async () => {
    const w = takeoverWorld();
    const { winner } = await serve(w, ctxOf(w.catalog, 'slot-2-1-1', 'reader-8'), null);
    expect(campaignOf(w, winner)).not.toBe('cmp-5-1-1');
  });

  it('keeps its template when a cap holds it back (house only), and lets it go out of flight or goal', async () => {
    const capped = takeoverWorld({ frequencyCaps: [{ count: 1, period: 'day' }] });
    await serve(capped, ctxOf(capped.catalog, 'slot-1-1-1', 'reader-9'));
    const again = await serve(capped, ctxOf(capped.catalog, 'slot-1-1-2', 'reader-9'));
    expect(again.plan).toMatchObject({ rtb: false, fill: true, paid: [] });
    expect(again.winner?.demandType ?? 'none').not.toMatch(/direct|exchange/);

    const done = takeoverWorld({ goals: [{ metric: 'impressions', lifetime: 1 }] });
    expect(campaignOf(done, (await serve(done, ctxOf(done.catalog, 'slot-1-1-1', 'reader-10'))).winner)).toBe(
      'cmp-5-1-1',
    );
    const after = await serve(done, ctxOf(done.catalog, 'slot-1-1-1', 'reader-11'));
    expect(after.winner).toBe(rtbBid);

    const later = takeoverWorld({ start: '2026-03-11', end: '2026-03-11' });
    expect((await serve(later, ctxOf(later.catalog, 'slot-1-1-1', 'reader-12'))).winner).toBe(rtbBid);
  });
});

describe('sponsorship: a share of the slot above every price', () => {
  it('takes its share of the requests (within 4 standard deviations) and stays out of the rest', async () => {
    const w = world((doc) => {
      campaign(doc, 'cmp-1-1-1').booking = { priority: 'sponsorship', sponsorshipShare: 0.3 };
    });
    const before = await skips('str-1-1-1', SkipReason.OutsideShare);
    const n = 2000;
    let sponsored = 0;
    for (let i = 0; i < n; i += 1) {
      const { winner } = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', `sponsor-${i}`));
      if (campaignOf(w, winner) === 'cmp-1-1-1') {
        sponsored += 1;
      } else {
        expect(winner).toBe(rtbBid);
      }
    }
    const sd = Math.sqrt(0.3 * 0.7 * n);
    expect(Math.abs(sponsored - 0.3 * n)).toBeLessThan(4 * sd);
    expect(await skips('str-1-1-1', SkipReason.OutsideShare)).toBe(before + n - sponsored);
  });
});

/** adv-1 (cmp-1-1-1) and adv-2 (cmp-2-1-2) are rival airlines; adv-2 pays most for 300x250. */
function rivalsWorld() {
  return world((doc) => {
    campaign(doc, 'cmp-1-1-1').booking = { exclusionGroups: ['airlines'] };
    campaign(doc, 'cmp-2-1-2').booking = { exclusionGroups: ['airlines', 'travel'] };
    strategy(doc, 'str-1-1-1-1').cpmMicros = 9_000_000;
    strategy(doc, 'str-2-1-2-1').cpmMicros = 1;
    strategy(doc, 'str-2-1-2-2').cpmMicros = 10_000_000;
  });
}

describe('competitive exclusion across the slots of an open', () => {
  it('keeps the rival out of a later slot', async () => {
    const w = rivalsWorld();
    const before = await skips('str-2-1-2-2', SkipReason.Excluded);
    const first = await serve(w, ctxOf(w.catalog, 'slot-1-1-1', 'reader-13'), null);
    expect(advertiserOf(w, first.winner)).toBe('adv-1');
    const second = await serve(w, ctxOf(w.catalog, 'slot-1-1-2', 'reader-13'), null);
    expect(advertiserOf(w, second.winner)).not.toBe('adv-2');
    expect(await skips('str-2-1-2-2', SkipReason.Excluded)).toBe(before + 1);
    // Another reader's email is not this one's.
    const elsewhere = await serve(w, ctxOf(w.catalog, 'slot-1-1-2', 'reader-14'), null);
    expect(advertiserOf(w, elsewhere.winner)).toBe('adv-2');
  });

  it('never shows both rivals when the slots are decided at once', async () => {
    const w = rivalsWorld();
    for (let r = 0; r < 30; r += 1) {
      const winners = await Promise.all(
        TPL_1_1.map((slotId) => serve(w, ctxOf(w.catalog, slotId, `rivals-${r}`), null)),
      );
      const advertisers = new Set(winners.map((x) => advertiserOf(w, x.winner)));
      expect(advertisers.has('adv-1') && advertisers.has('adv-2')).toBe(false);
    }
  });
});

describe('standard bookings: flight, targeting and goals before the auction', () => {
  /** cmp-1-1-1's strategy str-1-1-1-1 booked as `booking`, on slot-1-1-1 (a list and key-values of its own). */
  function bookedWorld(booking: Record<string, unknown>) {
    const w = world((doc) => {
      campaign(doc, 'cmp-1-1-1').booking = booking;
    });
    const base = ctxOf(w.catalog, 'slot-1-1-1', 'reader-1');
    const ctx = {
      ...base,
      tag: { ...base.tag, listId: 'finance', keyValues: [['section', 'markets']] as [string, string][] },
    };
    return { w, ctx };
  }
  const ofStrategy = (plan: DirectPlan) => plan.paid.filter((c) => c.strategyId === 'str-1-1-1-1');

  it.each([
    ['out of flight', { end: '2026-03-09' }, 'out_of_flight'],
    [
      'targeted elsewhere',
      { targeting: { keyValuesAllOf: [{ key: 'section', values: ['sports'] }] } },
      'targeting',
    ],
    ['on another list', { targeting: { lists: { exclude: ['finance'] } } }, 'targeting'],
  ])('leaves a booked candidate %s out of the plan, counted by reason', async (_name, booking, reason) => {
    const { w, ctx } = bookedWorld(booking);
    const catalogPaid = w.demand.candidates(ctx.slot.size, 'k').paid;
    expect(catalogPaid.some((c) => c.strategyId === 'str-1-1-1-1')).toBe(true);
    const before = await skips('str-1-1-1-1', reason);
    const plan = await w.priority.prepare(ctx, catalogPaid);
    expect(ofStrategy(plan)).toEqual([]);
    expect(plan.paid.length).toBe(catalogPaid.length - 1);
    expect(await skips('str-1-1-1-1', reason)).toBe(before + 1);
  });

  it('keeps a booked candidate that matches and settles its delivery up to its goal', async () => {
    const { w, ctx } = bookedWorld({
      goals: [{ metric: 'impressions', lifetime: 1 }],
      targeting: { countries: { include: ['US'] } },
    });
    const catalogPaid = w.demand.candidates(ctx.slot.size, 'k').paid;
    const first = await w.priority.prepare(ctx, catalogPaid);
    const [winner] = ofStrategy(first);
    expect(winner).toBeDefined();
    expect(await w.priority.settle(winner, first, ctx)).toMatchObject({ kind: 'ok' });
    // A second settlement on the same stale counts is refused by the counter itself.
    expect(await w.priority.settle(winner, first, ctx)).toMatchObject({ kind: 'drop' });
    const second = await w.priority.prepare(ctx, catalogPaid);
    expect(ofStrategy(second)).toEqual([]);
  });
});
