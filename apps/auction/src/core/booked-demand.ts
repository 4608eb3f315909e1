import { BookingDesk, type BookingRequest, type CountSnapshot, type DeliveryCounters } from '@app/booking';
import type { Catalog } from '@app/catalog';
import { bookingSkips } from '@app/observability';
import type { AdContext } from './ad-context';
import type { Candidate } from './candidate';

/** The booking terms of one request, for the commit of its winner. */
export interface BookedScreen {
  readonly paid: readonly Candidate[];
  readonly request: BookingRequest;
  readonly counts: CountSnapshot;
}

/** What the booking judges of an ad request. */
export function bookingRequestOf(ctx: AdContext): BookingRequest {
  return {
    nowMs: ctx.now.getTime(),
    timeZone: ctx.publisher.timeZone ?? 'UTC',
    publisherId: ctx.publisher.id,
    templateId: ctx.template.id,
    adSlotId: ctx.slot.id,
    listId: ctx.tag.listId,
    keyValues: ctx.tag.keyValues,
    country: ctx.viewer.geo.country,
    region: ctx.viewer.geo.region,
    deviceType: ctx.viewer.device.device_type,
    os: ctx.viewer.device.os,
    browser: ctx.viewer.device.browser,
    emailDomain: ctx.tag.emailDomain,
    age: ctx.tag.age,
    gender: ctx.tag.gender,
    readerKey: ctx.viewer.userKey,
  };
}

/**
 * The step between the catalog's direct candidates and the auction: each booked candidate goes
 * through its booking (flight, targeting, goals, pace, caps); the ones left out are counted by
 * reason. The winner's delivery is committed atomically; a commit refused (another process took
 * the last of a goal, a cap or the hour's pace) leaves the winner out too.
 */
export class BookedDemand {
  readonly desk: BookingDesk;

  constructor(
    catalog: Catalog,
    readonly counters: DeliveryCounters,
  ) {
    this.desk = new BookingDesk(catalog, counters);
  }

  async screen(ctx: AdContext, paid: readonly Candidate[]): Promise<BookedScreen> {
    const request = bookingRequestOf(ctx);
    const booked = paid.filter((c) => c.demandType === 'direct' && this.desk.of(c.strategyId));
    if (booked.length === 0) {
      return { paid, request, counts: new Map() };
    }
    const { verdicts, counts } = await this.desk.screen(booked, request);
    const out = new Set<Candidate>();
    verdicts.forEach((v, i) => {
      if (!v.eligible) {
        out.add(booked[i]);
        bookingSkips.inc({ strategy: booked[i].strategyId, reason: v.reason });
      }
    });
    return { paid: out.size === 0 ? paid : paid.filter((c) => !out.has(c)), request, counts };
  }

  /** True when the winner may run: not booked, or its delivery counted. */
  async commit(winner: Candidate, screen: BookedScreen): Promise<boolean> {
    if (winner.demandType !== 'direct' || !this.desk.of(winner.strategyId)) {
      return true;
    }
    const verdict = await this.desk.commit(
      winner.strategyId,
      screen.request,
      winner.priceMicros,
      screen.counts,
    );
    if (!verdict.eligible) {
      bookingSkips.inc({ strategy: winner.strategyId, reason: verdict.reason });
    }
    return verdict.eligible;
  }
}
