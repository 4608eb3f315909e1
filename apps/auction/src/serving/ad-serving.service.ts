import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Catalog } from '@app/catalog';
import { adRequests } from '@app/observability';
import { AuctionException, AuctionErrorCode } from '../auction.exception';
import { AuctionService } from '../auction.service';
import { CATALOG, CLOCK, type Clock } from '../auction.tokens';
import type { AdContext, Viewer } from '../core/ad-context';
import type { AdDecision } from '../core/ad-decision';
import { decisionEvent } from '../core/auction-events';
import { viewerDimensions } from '../core/event-dimensions';
import { UserSyncService, type SyncUser } from '../sync/user-sync.service';
import { TrackerDispatcher } from '../tracking/tracker.dispatcher';
import { attributionWindowHours, DecisionStore } from './decision.store';
import { EventPublisher } from './event.publisher';
import { parseTagQuery, queryLength, type TagQuery } from './tag-query.parser';
import { ViewerResolver } from './viewer.resolver';

/** What the controller answers: a redirect, or the transparent pixel when there is no ad. */
export interface AdAnswer {
  readonly location?: string;
  readonly setCookie?: string;
  /** Time spent waiting for DSPs (0 when no auction ran), for the `Server-Timing` header. */
  readonly dspWaitMs?: number;
}

/**
 * The ad tag: `/img` decides (or finds) the ad of a (slot, placement, viewer), counts the view as
 * unique or as a reopen and redirects to the image; `/click` finds the same decision and redirects
 * to its landing page. Events go to the bus and trackers are fired after the answer.
 */
@Injectable()
export class AdServingService {
  constructor(
    @Inject(CATALOG) private readonly catalog: Catalog,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly auctions: AuctionService,
    private readonly decisions: DecisionStore,
    private readonly viewers: ViewerResolver,
    private readonly events: EventPublisher,
    private readonly trackers: TrackerDispatcher,
    private readonly sync: UserSyncService,
  ) {}

  async image(slotId: string, req: Request): Promise<AdAnswer> {
    const request = this.read(slotId, req);
    const { ctx, key } = request;
    const { decision, dspWaitMs } = await this.decisionFor(request);
    if (!decision.filled) {
      adRequests.inc({ endpoint: 'img', result: 'unfilled' });
      return { setCookie: request.setCookie, dspWaitMs };
    }
    const first = await this.decisions.firstView(key);
    adRequests.inc({ endpoint: 'img', result: first ? 'unique' : 'reopen' });
    const impression = {
      ...decisionEvent('impression', ctx.now, decision, {
        ...decision.dimensions,
        ...viewerDimensions(ctx.viewer),
      }),
      reopen: !first,
      spend_micros: first ? decision.spendMicros : 0,
      revenue_micros: first ? decision.revenueMicros : 0,
    };
    this.events.publish([impression]);
    if (first) {
      this.trackers.fire('impression', decision.impressionTrackers);
    }
    await this.touch('view', decision, request.userKeys, ctx.now);
    return { location: decision.imageUrl, setCookie: request.setCookie, dspWaitMs };
  }

  async click(slotId: string, req: Request): Promise<AdAnswer> {
    const request = this.read(slotId, req);
    const { ctx } = request;
    const { decision } = await this.decisionFor(request);
    if (!decision.filled || !decision.clickUrl) {
      adRequests.inc({ endpoint: 'click', result: 'unfilled' });
      return { location: `https://${ctx.publisher.domain}/`, setCookie: request.setCookie };
    }
    adRequests.inc({ endpoint: 'click', result: 'click' });
    this.events.publish([
      decisionEvent('click', ctx.now, decision, { ...decision.dimensions, ...viewerDimensions(ctx.viewer) }),
    ]);
    this.trackers.fire('click', decision.clickTrackers);
    await this.touch('click', decision, request.userKeys, ctx.now);
    return { location: decision.clickUrl, setCookie: request.setCookie };
  }

  private read(slotId: string, req: Request) {
    const { slot, template, publisher } = this.catalog.slotLineage(slotId);
    if (!slot || !template || !publisher) {
      adRequests.inc({
        endpoint: req.path.startsWith('/click') ? 'click' : 'img',
        result: 'unknown_ad_slot',
      });
      throw new AuctionException(AuctionErrorCode.UnknownAdSlot, 'no ad slot with that id');
    }
    const parsed = parseTagQuery(req.query as TagQuery, queryLength(req.originalUrl));
    for (const problem of parsed.problems) {
      adRequests.inc({ endpoint: 'tag', result: problem });
    }
    const { viewer, setCookie, userKeys, knownCookie, recipientUserId } = this.viewers.resolve(
      req,
      parsed.tag,
    );
    const syncUser: SyncUser = { exchangeUuid: knownCookie, recipientUserId, consent: parsed.tag.consent };
    const ctx: AdContext = {
      auctionId: randomUUID(),
      now: this.clock(),
      slot,
      template,
      publisher,
      tag: parsed.tag,
      viewer,
    };
    const key = decisionKey(slot.id, parsed.tag.placementId, viewer);
    return { ctx, key, setCookie, userKeys, syncUser, degraded: parsed.oversized };
  }

  /** The kept decision of the request's key, or a new auction's, kept unless another won the race. */
  private async decisionFor(
    request: ReturnType<AdServingService['read']>,
  ): Promise<{ decision: AdDecision; dspWaitMs: number }> {
    const existing = await this.decisions.get(request.key);
    if (existing) {
      await this.sync.bind(request.syncUser);
      return { decision: existing, dspWaitMs: 0 };
    }
    const buyerUids = await this.sync.buyerUids(request.syncUser);
    const ctx = { ...request.ctx, viewer: { ...request.ctx.viewer, buyerUids } };
    const result = await this.auctions.decide(ctx, { rtb: !request.degraded });
    const { decision, kept } = await this.decisions.keep(request.key, result.decision);
    if (kept) {
      this.events.publish(result.events);
      if (result.winNotice) {
        this.trackers.fire('win_notice', [result.winNotice]);
      }
    }
    return { decision, dspWaitMs: result.dspWaitMs };
  }

  private async touch(kind: 'click' | 'view', decision: AdDecision, userKeys: readonly string[], now: Date) {
    const advertiser = this.catalog.advertisers.get(decision.dimensions.advertiser_id);
    if (!advertiser) {
      return;
    }
    const hours = attributionWindowHours(advertiser, kind);
    await this.decisions.touch(kind, advertiser.id, userKeys, { at: now.toISOString(), decision }, hours);
  }
}

/** One decision per slot, placement (the email drop) and viewer. */
export function decisionKey(slotId: string, placementId: string, viewer: Viewer): string {
  return `${slotId}|${encodeURIComponent(placementId)}|${viewer.userKey}`;
}
