import { BookingDesk, type BookingRequest, type CountSnapshot, type DeliveryCounters } from '@app/booking';
import type { Catalog } from '@app/catalog';
import { bookingSkips } from '@app/observability';
import type { AdContext } from './ad-context';
import type { Candidate } from './candidate';

/** The booking terms of one request, for the commit of its winner. */
export interface BookedTerms {
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
 * The catalog's bookings and their delivery counters: `BookedPriority` screens the booked
 * candidates through the desk (flight, targeting, goals, pace, caps) before the auction; the
 * winner's delivery is committed atomically here, and a commit refused (another process took the
 * last of a goal, a cap or the hour's pace) leaves the winner out too.
 */
export class BookedDemand {
  readonly desk: BookingDesk;

  constructor(
    catalog: Catalog,
    readonly counters: DeliveryCounters,
  ) {
    this.desk = new BookingDesk(catalog, counters);
  }

  /** True when the winner may run: not booked, or its delivery counted. */
  async commit(winner: Candidate, terms: BookedTerms): Promise<boolean> {
    if (winner.demandType !== 'direct' || !this.desk.of(winner.strategyId)) {
      return true;
    }
    const verdict = await this.desk.commit(
      winner.strategyId,
      terms.request,
      winner.priceMicros,
      terms.counts,
    );
    if (!verdict.eligible) {
      bookingSkips.inc({ strategy: winner.strategyId, reason: verdict.reason });
    }
    return verdict.eligible;
  }
}
