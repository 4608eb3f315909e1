import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import type { Catalog, CatalogSource } from '@app/catalog';
import { adRequests } from '@app/observability';
import { AuctionException, AuctionErrorCode } from '../auction.exception';
import { AuctionService, FULL_AUCTION, type DecideOptions } from '../auction.service';
import { CATALOG, CLOCK, type Clock } from '../auction.tokens';
import type { AdContext, Viewer } from '../core/ad-context';
import { privacyOf } from '../core/privacy-context';
import { DecisionEvents } from '../core/auction-events';
import { viewerDimensions } from '../core/event-dimensions';
import { UserSyncService, type SyncUser } from '../sync/user-sync.service';
import { TrackerDispatcher } from '../tracking/tracker.dispatcher';
import { bookingRequestOf } from '../core/booked-demand';
import { digest, type StoredDecision } from './decision.codec';
import { attributionWindowHours, DecisionStore } from './decision.store';
import { EventPublisher } from './event.publisher';
import { LoadShedder } from './load-shedder';
import { parseTagQuery, type TagQuery } from './tag-query.parser';
import { ViewerResolver } from './viewer.resolver';

/** What the ad tag answers: a redirect, or the transparent pixel when there is no ad. */
export interface AdAnswer {
  readonly location?: string;
  readonly setCookie?: string;
  /** Time spent waiting for DSPs (0 when no auction ran), for the `Server-Timing` header. */
  readonly dspWaitMs?: number;
}

/** An ad tag request as the handler read it: the slot, the query and its raw length. */
export interface TagRequest {
  readonly slotId: string;
  readonly query: TagQuery;
  readonly queryLength: number;
  readonly req: IncomingMessage;
  /** When the request was read (`performance.now()`); now when absent. */
  readonly readAt?: number;
}

/** One request, read: its context, decision key and who is looking. */
interface ReadRequest {
  readonly ctx: AdContext;
  readonly key: string;
  readonly setCookie?: string;
  readonly userKeys: readonly string[];
  readonly syncUser: SyncUser;
  /** The query was past its limit: house and fallback ads only. */
  readonly degraded: boolean;
}

/**
 * The ad tag: `/img` decides (or finds) the ad of a (slot, placement, viewer), counts the view as
 * unique or as a reopen and redirects to the image; `/click` finds the same decision and redirects
 * to its landing page. In one direction: read the request, find the decision or run the auction
 * (which settles into one immutable outcome), keep it, build its events once, publish them, fire
 * the trackers, answer.
 */
@Injectable()
export class AdServingService {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly auctions: AuctionService,
    private readonly decisions: DecisionStore,
    private readonly viewers: ViewerResolver,
    private readonly events: EventPublisher,
    private readonly trackers: TrackerDispatcher,
    private readonly sync: UserSyncService,
    private readonly shedder: LoadShedder,
  ) {}

  /** `options`: the demand this request may ask, `FULL_AUCTION` unless shed under load. */
  async image(tag: TagRequest, options: DecideOptions = FULL_AUCTION): Promise<AdAnswer> {
    const request = await this.read('img', tag);
    const { ctx, key } = request;
    const found = await this.decisionFor(request, options, true);
    const { stored, dspWaitMs } = found;
    const { decision } = stored;
    if (!decision.filled) {
      adRequests.inc({ endpoint: 'img', result: 'unfilled' });
      return { setCookie: request.setCookie, dspWaitMs };
    }
    const advertiser = this.catalog.advertisers.get(decision.winner.advertiser_id);
    // A decision this request made was kept as seen: this is its first view.
    const first = found.events ? true : await this.decisions.firstView(key, stored, advertiser);
    adRequests.inc({ endpoint: 'img', result: first ? 'unique' : 'reopen' });
    // The auction's own request shows its decision to the viewer it was decided for.
    const events = found.events ?? new DecisionEvents(decision);
    this.events.publish([
      events.impression(ctx.now, found.events ? undefined : viewerDimensions(ctx.viewer), first),
    ]);
    if (first) {
      this.trackers.fire('impression', decision.impressionTrackers);
      // The first view is when the impression becomes billable: its spend is booked now.
      if (decision.billingNotice) {
        this.trackers.fire('billing_notice', [decision.billingNotice]);
      }
    }
    await this.touch('view', request, stored);
    return { location: decision.imageUrl, setCookie: request.setCookie, dspWaitMs };
  }

  async click(tag: TagRequest, options: DecideOptions = FULL_AUCTION): Promise<AdAnswer> {
    const request = await this.read('click', tag);
    const { ctx } = request;
    const { stored } = await this.decisionFor(request, options, false);
    const { decision } = stored;
    if (!decision.filled || !decision.clickUrl) {
      adRequests.inc({ endpoint: 'click', result: 'unfilled' });
      return { location: `https://${ctx.publisher.domain}/`, setCookie: request.setCookie };
    }
    adRequests.inc({ endpoint: 'click', result: 'click' });
    this.events.publish([new DecisionEvents(decision).click(ctx.now, viewerDimensions(ctx.viewer))]);
    this.trackers.fire('click', decision.clickTrackers);
    await this.touch('click', request, stored);
    if (decision.winner.demand_type === 'direct') {
      // A booked clicks goal counts this decision's first click (docs/direct-campaigns.md#clicks).
      // The reader reaches the landing page even when the counters cannot be written.
      await this.auctions.booked.desk
        .countClick(decision.winner.strategy_id, bookingRequestOf(ctx), digest(request.key))
        .catch(() => adRequests.inc({ endpoint: 'click', result: 'click_not_counted' }));
    }
    return { location: decision.clickUrl, setCookie: request.setCookie };
  }

  private async read(endpoint: 'img' | 'click', tag: TagRequest): Promise<ReadRequest> {
    const { slot, template, publisher } = this.catalog.slotLineage(tag.slotId);
    if (!slot || !template || !publisher) {
      adRequests.inc({ endpoint, result: 'unknown_ad_slot' });
      throw new AuctionException(AuctionErrorCode.UnknownAdSlot, 'no ad slot with that id');
    }
    const parsed = parseTagQuery(tag.query, tag.queryLength);
    for (const problem of parsed.problems) {
      adRequests.inc({ endpoint: 'tag', result: problem });
    }
    const { viewer, setCookie, userKeys, knownCookie, recipientUserId } = await this.viewers.resolve(
      tag.req,
      parsed.tag,
    );
    const { privacy, consent } = privacyOf(parsed.tag.privacy, publisher);
    const ctx: AdContext = {
      auctionId: randomUUID(),
      now: this.clock(),
      slot,
      template,
      publisher,
      tag: parsed.tag,
      viewer,
      privacy,
      consent,
      arrivedAt: tag.readAt ?? performance.now(),
    };
    return {
      ctx,
      key: decisionKey(slot.id, parsed.tag.placementId, viewer),
      setCookie,
      userKeys,
      syncUser: {
        exchangeUuid: knownCookie,
        recipientUserId,
        consent: parsed.tag.consent,
        privacy: { privacy, consent },
      },
      degraded: parsed.oversized,
    };
  }

  /**
   * The kept decision of the request's key, or a new auction's, kept unless another won the race;
   * a new auction's events are published once it is kept. `seen`: the request shows the ad.
   */
  private async decisionFor(
    request: ReadRequest,
    options: DecideOptions,
    seen: boolean,
  ): Promise<{ stored: StoredDecision; dspWaitMs: number; events?: DecisionEvents }> {
    const existing = await this.decisions.get(request.key);
    if (existing) {
      await this.sync.bind(request.syncUser);
      return { stored: existing, dspWaitMs: 0 };
    }
    // Under overload the DSPs are not asked: the request is decided at once on the rest.
    const rtb =
      options.rtb &&
      !request.degraded &&
      this.shedder.admit(this.auctions.hasCatalogDemand(request.ctx.slot.size), request.ctx.arrivedAt);
    let settled;
    try {
      // The DSPs' ids for this reader (a store lookup for each DSP) only for an auction that asks
      // them: a shed request only binds the reader, as a reopen does.
      let ctx = request.ctx;
      if (rtb) {
        const buyerUids = await this.sync.buyerUids(request.syncUser);
        ctx = { ...ctx, viewer: { ...ctx.viewer, buyerUids } };
      } else {
        await this.sync.bind(request.syncUser);
      }
      settled = await this.auctions.decide(ctx, {
        rtb,
        direct: options.direct && !request.degraded,
      });
    } finally {
      if (rtb) {
        this.shedder.release();
      }
    }
    const advertiser = this.catalog.advertisers.get(settled.decision.winner.advertiser_id);
    const { stored, kept } = await this.decisions.keep(request.key, settled.decision, seen, advertiser);
    if (!kept) {
      return { stored, dspWaitMs: settled.dspWaitMs };
    }
    const events = new DecisionEvents(stored.decision);
    this.events.publish(events.auction(settled));
    if (settled.winNotice) {
      this.trackers.fire('win_notice', [settled.winNotice]);
    }
    this.trackers.fire('loss_notice', settled.lossNotices);
    return { stored, dspWaitMs: settled.dspWaitMs, events };
  }

  private async touch(kind: 'click' | 'view', request: ReadRequest, stored: StoredDecision) {
    const advertiser = this.catalog.advertisers.get(stored.decision.winner.advertiser_id);
    if (!advertiser) {
      return;
    }
    const hours = attributionWindowHours(advertiser, kind);
    await this.decisions.touch(
      kind,
      advertiser.id,
      request.userKeys,
      request.key,
      stored,
      request.ctx.now.getTime(),
      hours,
    );
  }
}

/** One decision per slot, placement (the email drop) and viewer. */
export function decisionKey(slotId: string, placementId: string, viewer: Viewer): string {
  return `${slotId}|${encodeURIComponent(placementId)}|${viewer.userKey}`;
}
