import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Catalog } from '@app/catalog';
import { fnv1a32, type AdEvent } from '@app/events';
import { auctionDuration, bidOutcomes } from '@app/observability';
import { BidRejectionReason, extractMarkup, substituteMacros, validateNativeMarkup } from '@app/openrtb';
import type { AuctionConfig } from './auction.config';
import { AUCTION_CONFIG, CATALOG } from './auction.tokens';
import type { AdContext } from './core/ad-context';
import { impressionMoney, type AdDecision } from './core/ad-decision';
import { baseEvent, bidEvent, decisionEvent } from './core/auction-events';
import { decideAuction, NoFillReason, type AuctionOutcome } from './core/auction';
import type { Candidate } from './core/candidate';
import { CatalogDemand } from './core/catalog-demand';
import { PublicOrigin } from './public-origin.service';
import { NativeCreativeService } from './serving/native-creative.service';
import { slotDimensionsOf, winnerDimensions } from './core/event-dimensions';
import { BidderClient } from './rtb/bidder.client';
import { RtbDemand, type BidRecord } from './rtb/rtb-demand';

/** What the winner shows and where it leads. */
interface Creative {
  readonly imageUrl: string;
  readonly clickUrl: string;
  readonly impressionTrackers: readonly string[];
  readonly clickTrackers: readonly string[];
}

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
    private readonly natives: NativeCreativeService,
  ) {
    this.demand = new CatalogDemand(
      catalog,
      (creative) => `${origin.value}/creatives/${encodeURIComponent(creative.id)}.svg`,
    );
    this.client = new BidderClient({
      connectionsPerDsp: config.DSP_CONNECTIONS,
      maxResponseBytes: config.BID_RESPONSE_MAX_BYTES,
      hardTimeoutMs: Math.max(1000, 5 * config.AUCTION_TMAX_MS),
    });
    this.rtb = new RtbDemand(catalog, this.client, { tmaxMs: config.AUCTION_TMAX_MS });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }

  /**
   * Runs the auction of one ad request. `rtb: false` (a request we could not read in full) leaves
   * the slot to house and fallback ads. A winner whose creative cannot be made (a native image
   * that does not load) is rejected with its reason, and the auction is decided again without it.
   */
  async decide(ctx: AdContext, options: { rtb: boolean } = { rtb: true }): Promise<AuctionResult> {
    const started = performance.now();
    const deadline = started + this.config.AUCTION_TMAX_MS;
    const at = ctx.publisher.auctionType ?? 2;
    const catalogDemand = this.demand.candidates(ctx.slot.size, `${ctx.slot.id}|${ctx.viewer.userKey}`);
    const rtb = options.rtb
      ? await this.rtb.collect(ctx, this.rtb.eligibleDsps(ctx), deadline, at)
      : { candidates: [], records: [], waitMs: 0 };
    let paid = options.rtb ? [...catalogDemand.paid, ...rtb.candidates] : [];
    const pick = (pool: readonly Candidate[]) =>
      pool[fnv1a32(`${ctx.slot.id}|${ctx.viewer.userKey}`) % pool.length];
    for (;;) {
      const outcome = decideAuction(paid, catalogDemand.fill, at, pick);
      if (!outcome.filled) {
        return this.finish(ctx, outcome, undefined, rtb, started);
      }
      const creative = await this.creativeOf(ctx, outcome.winner, outcome.clearingMicros);
      if (typeof creative !== 'string') {
        return this.finish(ctx, outcome, creative, rtb, started);
      }
      // A house or fallback ad without an image leaves the slot empty rather than loop.
      if (!paid.includes(outcome.winner)) {
        return this.finish(ctx, { filled: false, reason: NoFillReason.NoDemand }, undefined, rtb, started);
      }
      const record = rtb.records.find((r) => r.candidate === outcome.winner);
      if (record) {
        Object.assign(record, { status: 'rejected', reason: creative });
      }
      paid = paid.filter((c) => c !== outcome.winner);
    }
  }

  private finish(
    ctx: AdContext,
    outcome: AuctionOutcome,
    creative: Creative | undefined,
    rtb: { records: readonly BidRecord[]; waitMs: number },
    started: number,
  ): AuctionResult {
    auctionDuration.observe((performance.now() - started) / 1000);
    return { ...this.settle(ctx, outcome, creative, rtb.records), dspWaitMs: rtb.waitMs };
  }

  private settle(
    ctx: AdContext,
    outcome: AuctionOutcome,
    creative: Creative | undefined,
    records: readonly BidRecord[],
  ): Omit<AuctionResult, 'dspWaitMs'> {
    // The slot, tag and viewer dimensions are the same for every event of the auction.
    const slotDimensions = slotDimensionsOf(ctx);
    const winner = outcome.filled && creative ? outcome.winner : undefined;
    const clearingMicros = winner && outcome.filled ? outcome.clearingMicros : 0;
    for (const record of records) {
      if (winner && record.candidate === winner) {
        record.status = 'won';
      }
    }
    const money = winner
      ? impressionMoney(clearingMicros, ctx.publisher.exchangeShare)
      : impressionMoney(0, 0);
    const decision: AdDecision = {
      auctionId: ctx.auctionId,
      decidedAt: ctx.now.toISOString(),
      userId: ctx.viewer.userId,
      filled: winner !== undefined,
      imageUrl: creative?.imageUrl,
      clickUrl: creative?.clickUrl,
      impressionTrackers: creative?.impressionTrackers ?? [],
      clickTrackers: creative?.clickTrackers ?? [],
      dimensions: winner ? { ...slotDimensions, ...winnerDimensions(this.catalog, winner) } : slotDimensions,
      dspId: winner?.rtb?.dspId,
      dealId: winner?.rtb?.dealId,
      clearingMicros,
      ...money,
    };
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
      const dims = record.candidate
        ? { ...slotDimensions, ...winnerDimensions(this.catalog, record.candidate) }
        : slotDimensions;
      events.push(bidEvent(ctx.auctionId, ctx.viewer.userId, ctx.now, dims, record));
    }
    if (winner) {
      events.push(decisionEvent('win', ctx.now, decision));
    }
    const nurl = winner?.rtb?.nurl;
    return {
      decision,
      events,
      winNotice: nurl ? substituteMacros(nurl, this.macroValues(ctx, winner, clearingMicros)) : undefined,
    };
  }

  /**
   * The winner's image, landing page and trackers, macros filled in with the clearing price: a
   * catalog creative's from the catalog, a banner's from its markup, a native ad's from its
   * validated assets (flattened into one image). A string is why it cannot be served.
   */
  private async creativeOf(
    ctx: AdContext,
    winner: Candidate,
    clearingMicros: number,
  ): Promise<Creative | string> {
    const rtb = winner.rtb;
    if (!rtb) {
      return winner.imageUrl && winner.clickUrl
        ? { imageUrl: winner.imageUrl, clickUrl: winner.clickUrl, impressionTrackers: [], clickTrackers: [] }
        : NoFillReason.NoDemand;
    }
    const macros = this.macroValues(ctx, winner, clearingMicros);
    if (rtb.nativeRequest) {
      const native = validateNativeMarkup(rtb.adm, rtb.nativeRequest, macros);
      if (!native.ok) {
        return native.reason;
      }
      const [w, h] = ctx.slot.size.split('x').map(Number);
      const image = await this.natives.imageOf(rtb.dspId, rtb.crid, native.ad, { w, h });
      if (!image.ok) {
        return image.reason;
      }
      return {
        imageUrl: image.url,
        clickUrl: native.ad.link.url,
        impressionTrackers: native.ad.imptrackers,
        clickTrackers: native.ad.link.clicktrackers,
      };
    }
    const markup = extractMarkup(substituteMacros(rtb.adm, macros));
    return markup.ok
      ? {
          imageUrl: markup.imageUrl,
          clickUrl: markup.clickUrl,
          impressionTrackers: markup.trackers,
          clickTrackers: [],
        }
      : BidRejectionReason.InvalidMarkup;
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
