import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Catalog } from '@app/catalog';
import { fnv1a32, type AdEvent } from '@app/events';
import { auctionDuration, bidOutcomes } from '@app/observability';
import { extractMarkup, substituteMacros } from '@app/openrtb';
import type { AuctionConfig } from './auction.config';
import { AUCTION_CONFIG, CATALOG } from './auction.tokens';
import type { AdContext } from './core/ad-context';
import { impressionMoney, type AdDecision } from './core/ad-decision';
import { baseEvent, bidEvent, decisionEvent } from './core/auction-events';
import { decideAuction, type AuctionOutcome } from './core/auction';
import type { Candidate } from './core/candidate';
import { CatalogDemand } from './core/catalog-demand';
import { PublicOrigin } from './public-origin.service';
import { dimensionsOf } from './core/event-dimensions';
import { BidderClient } from './rtb/bidder.client';
import { RtbDemand, type BidRecord } from './rtb/rtb-demand';

export interface AuctionResult {
  readonly decision: AdDecision;
  /** The auction, its bids and its win, to publish once the decision is kept. */
  readonly events: readonly AdEvent[];
  /** The winner's win notice, macros substituted, to call server to server. */
  readonly winNotice?: string;
  /** Time spent waiting for DSP answers, ms. */
  readonly dspWaitMs: number;
}

/**
 * Decides which ad fills a slot: direct, house and fallback demand from the catalog and RTB bids
 * from the DSPs, through the plain auction functions of `core/`. No I/O here but the DSP calls.
 */
@Injectable()
export class AuctionService implements OnApplicationShutdown {
  private readonly demand: CatalogDemand;
  private readonly rtb: RtbDemand;
  private readonly client: BidderClient;

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(CATALOG) private readonly catalog: Catalog,
    origin: PublicOrigin,
  ) {
    this.demand = new CatalogDemand(
      catalog,
      (creative) => `${origin.value}/creatives/${encodeURIComponent(creative.id)}.svg`,
    );
    this.client = new BidderClient({
      connectionsPerDsp: config.DSP_CONNECTIONS,
      maxResponseBytes: config.BID_RESPONSE_MAX_BYTES,
    });
    this.rtb = new RtbDemand(catalog, this.client, { tmaxMs: config.AUCTION_TMAX_MS });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /**
   * Runs the auction of one ad request. `rtb: false` (a request we could not read in full) leaves
   * the slot to house and fallback ads.
   */
  async decide(ctx: AdContext, options: { rtb: boolean } = { rtb: true }): Promise<AuctionResult> {
    const started = performance.now();
    const deadline = started + this.config.AUCTION_TMAX_MS;
    const at = ctx.publisher.auctionType ?? 2;
    const catalogDemand = this.demand.candidates(ctx.slot.size, `${ctx.slot.id}|${ctx.viewer.userKey}`);
    const rtb = options.rtb
      ? await this.rtb.collect(ctx, this.rtb.eligibleDsps(ctx), deadline, at)
      : { candidates: [], records: [], waitMs: 0 };
    const paid = options.rtb ? [...catalogDemand.paid, ...rtb.candidates] : [];
    const outcome = decideAuction(paid, catalogDemand.fill, at, (pool) => {
      return pool[fnv1a32(`${ctx.slot.id}|${ctx.viewer.userKey}`) % pool.length];
    });
    auctionDuration.observe((performance.now() - started) / 1000);
    return { ...this.settle(ctx, outcome, rtb.records), dspWaitMs: rtb.waitMs };
  }

  private settle(
    ctx: AdContext,
    outcome: AuctionOutcome,
    records: readonly BidRecord[],
  ): Omit<AuctionResult, 'dspWaitMs'> {
    const winner = outcome.filled ? outcome.winner : undefined;
    const clearingMicros = outcome.filled ? outcome.clearingMicros : 0;
    for (const record of records) if (winner && record.candidate === winner) record.status = 'won';
    const dimensions = dimensionsOf(ctx, this.catalog, winner);
    const creative = winner && this.creativeOf(ctx, winner, clearingMicros);
    const filled = creative !== undefined;
    const money = filled
      ? impressionMoney(clearingMicros, ctx.publisher.exchangeShare)
      : impressionMoney(0, 0);
    const decision: AdDecision = {
      auctionId: ctx.auctionId,
      decidedAt: ctx.now.toISOString(),
      userId: ctx.viewer.userId,
      filled,
      imageUrl: creative?.imageUrl,
      clickUrl: creative?.clickUrl,
      impressionTrackers: creative?.trackers ?? [],
      clickTrackers: [],
      dimensions: filled ? dimensions : dimensionsOf(ctx, this.catalog),
      dspId: winner?.rtb?.dspId,
      dealId: winner?.rtb?.dealId,
      clearingMicros,
      ...money,
    };
    const slotDimensions = dimensionsOf(ctx, this.catalog);
    const events: AdEvent[] = [
      {
        ...baseEvent('auction', ctx.now, decision.dimensions),
        auction_id: ctx.auctionId,
        user_id: ctx.viewer.userId,
        reason: outcome.filled ? undefined : outcome.reason,
      },
    ];
    for (const record of records) {
      bidOutcomes.inc({ dsp: record.dspId, status: record.status, reason: record.reason ?? '' });
      const dims = record.candidate ? dimensionsOf(ctx, this.catalog, record.candidate) : slotDimensions;
      events.push(bidEvent(ctx.auctionId, ctx.viewer.userId, ctx.now, dims, record));
    }
    if (filled) events.push(decisionEvent('win', ctx.now, decision));
    const nurl = winner?.rtb?.nurl;
    return {
      decision,
      events,
      winNotice: nurl ? substituteMacros(nurl, this.macroValues(ctx, winner, clearingMicros)) : undefined,
    };
  }

  /** The winner's image, landing page and trackers; an RTB winner's come from its markup. */
  private creativeOf(
    ctx: AdContext,
    winner: Candidate,
    clearingMicros: number,
  ): { imageUrl: string; clickUrl: string; trackers: string[] } | undefined {
    if (!winner.rtb) {
      return winner.imageUrl && winner.clickUrl
        ? { imageUrl: winner.imageUrl, clickUrl: winner.clickUrl, trackers: [] }
        : undefined;
    }
    const markup = extractMarkup(
      substituteMacros(winner.rtb.adm, this.macroValues(ctx, winner, clearingMicros)),
    );
    return markup.ok
      ? { imageUrl: markup.imageUrl, clickUrl: markup.clickUrl, trackers: markup.trackers }
      : undefined;
  }

  private macroValues(ctx: AdContext, winner: Candidate, clearingMicros: number) {
    return {
      auctionId: ctx.auctionId,
      impId: winner.rtb?.impId ?? '',
      adId: winner.rtb?.adId ?? '',
      priceMicros: clearingMicros,
    };
  }
}
