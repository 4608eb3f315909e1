import cluster from 'node:cluster';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { HOUR_MS, openLedgerFor, type DeliveryCounters, type OpenLedger } from '@app/booking';
import type { Catalog, CatalogSource } from '@app/catalog';
import { fnv1a32 } from '@app/events';
import { auctionDuration, bidOutcomes, dspLateAnswers, trackerCalls } from '@app/observability';
import {
  BidRejectionReason,
  extractMarkupWith,
  substituteMacros,
  validateNativeMarkup,
  type MacroValues,
} from '@app/openrtb';
import { auctionWorkers, type AuctionConfig } from './auction.config';
import { AUCTION_CONFIG, CATALOG, DELIVERY_COUNTERS_TOKEN } from './auction.tokens';
import type { AdContext } from './core/ad-context';
import { decideAuction, NoFillReason, settleAuction, type SettledAuction } from './core/auction';
import type { BidRecord, Candidate, Creative } from './core/candidate';
import { BookedDemand } from './core/booked-demand';
import { BookedPriority } from './core/booked-priority';
import { CatalogDemand } from './core/catalog-demand';
import { winnerDimensions, type WinnerDimensions } from './core/event-dimensions';
import { PublicOrigin } from './public-origin.service';
import { BidderClient } from './rtb/bidder.client';
import { DspTraffic } from './rtb/dsp-traffic';
import { RtbDemand } from './rtb/rtb-demand';
import { NativeCreativeService } from './serving/native-creative.service';

/** Which demand an auction asks. */
export interface DecideOptions {
  readonly rtb: boolean;
  readonly direct: boolean;
}

export const FULL_AUCTION: DecideOptions = { rtb: true, direct: true };

/**
 * Decides which ad fills a slot: direct, house and fallback demand from the catalog and RTB bids
 * from the DSPs, through the plain auction functions of `core/`, then settles the auction into one
 * immutable outcome. No I/O here but the DSP calls (and a native winner's image).
 */
/**
 * What the auction derives from one catalog: demand by size, bookings, DSPs. Rebuilt on the first
 * auction after a catalog reload; an auction runs on the generation it started with.
 */
interface CatalogGeneration {
  readonly catalog: Catalog;
  readonly demand: CatalogDemand;
  readonly booked: BookedDemand;
  /** Roadblocks, takeovers, sponsorship and exclusion across an email open's slots. */
  readonly priority: BookedPriority;
  readonly rtb: RtbDemand;
  readonly traffic: DspTraffic;
  /** The DSPs' part of the catalog: their traffic state (caps, health) lives on while it is the same. */
  readonly dspsText: string;
  /** Winner dimensions by candidate strategy and creative: the catalog lineage is looked up once. */
  readonly lineage: Map<string, WinnerDimensions>;
}

/**
 * Decides which ad fills a slot: direct, house and fallback demand from the catalog and RTB bids
 * from the DSPs, through the plain auction functions of `core/`, then settles the auction into one
 * immutable outcome. No I/O here but the DSP calls (and a native winner's image).
 */
@Injectable()
export class AuctionService implements OnApplicationShutdown {
  private generation: CatalogGeneration;
  private readonly client: BidderClient;
  /** The email opens' reservations, beside the delivery counters (memory or Redis). */
  private readonly opens: OpenLedger;

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(DELIVERY_COUNTERS_TOKEN) private readonly counters: DeliveryCounters,
    private readonly origin: PublicOrigin,
    private readonly natives: NativeCreativeService,
  ) {
    this.client = new BidderClient({
      connectionsPerDsp: config.DSP_CONNECTIONS,
      maxResponseBytes: config.BID_RESPONSE_MAX_BYTES,
      hardTimeoutMs: Math.max(1000, 5 * config.AUCTION_TMAX_MS),
      onLateAnswer: () => dspLateAnswers.inc(),
    });
    this.opens = openLedgerFor(counters, config);
    this.generation = this.derive(catalogs.current);
  }

  /** Bookings of direct campaigns: flights, targeting, goals, pace and caps (docs/direct-campaigns.md). */
  get booked(): BookedDemand {
    return this.current().booked;
  }

  /** The generation of the catalog serving now: derived again once after each reload. */
  private current(): CatalogGeneration {
    const catalog = this.catalogs.current;
    if (this.generation.catalog !== catalog) {
      this.generation = this.derive(catalog, this.generation);
    }
    return this.generation;
  }

  private derive(catalog: Catalog, previous?: CatalogGeneration): CatalogGeneration {
    const config = this.config;
    const demand = new CatalogDemand(
      catalog,
      (creative) => `${this.origin.value}/creatives/${encodeURIComponent(creative.id)}.svg`,
    );
    const dspsText = JSON.stringify(catalog.document.dsps);
    const traffic =
      previous?.dspsText === dspsText
        ? previous.traffic
        : new DspTraffic(catalog.document.dsps, {
            // The processes sharing each DSP's cap: this one alone, unless it is one of the workers.
            workers: cluster.isWorker ? auctionWorkers(config) : 1,
            unhealthyFailureShare: config.DSP_UNHEALTHY_FAILURE_SHARE,
            unhealthyTrafficShare: config.DSP_UNHEALTHY_TRAFFIC_SHARE,
          });
    const rtb = new RtbDemand(catalog, this.client, traffic, {
      tmaxMs: config.AUCTION_TMAX_MS,
      exchangeDomain: config.EXCHANGE_DOMAIN,
    });
    const booked = new BookedDemand(catalog, this.counters);
    const priority = new BookedPriority(
      catalog,
      booked,
      demand,
      this.opens,
      config.DECISION_TTL_HOURS * HOUR_MS,
    );
    return { catalog, demand, booked, priority, rtb, traffic, dspsText, lineage: new Map() };
  }

  /** Whether the catalog holds direct, house or fallback ads of that size (an ad without RTB). */
  hasCatalogDemand(size: string): boolean {
    return this.current().demand.hasDemand(size);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
    await this.counters.close();
    await this.opens.close();
  }

  /**
   * Runs the auction of one ad request: with every demand, with direct, house and fallback demand
   * only (`rtb: false`: a request shed under load), or with house and fallback only (`direct:
   * false` too: a request we could not read in full). A winner whose creative
   * cannot be made (a native image that does not load) is refused with its reason, and the auction
   * is decided again without it.
   */
  async decide(ctx: AdContext, options: DecideOptions = FULL_AUCTION): Promise<SettledAuction> {
    const started = performance.now();
    const generation = this.current();
    const deadline = started + this.config.AUCTION_TMAX_MS;
    const at = ctx.publisher.auctionType ?? 2;
    const viewerKey = `${ctx.slot.id}|${ctx.viewer.userKey}`;
    const catalogDemand = generation.demand.candidates(ctx.slot.size, viewerKey);
    // The bookings' plan of the slot (docs/direct-campaigns.md): made before the DSPs are asked
    // when a takeover, a roadblock or a sponsorship may own the slot, else beside them.
    const planning = options.direct ? generation.priority.prepare(ctx, catalogDemand.paid) : undefined;
    planning?.catch(() => undefined);
    const owned =
      planning && generation.priority.mayOwn(ctx, catalogDemand.paid) ? await planning : undefined;
    const rtb =
      options.rtb && (owned?.rtb ?? true)
        ? await generation.rtb.collect(ctx, generation.rtb.eligibleDsps(ctx), deadline, at)
        : { candidates: [], records: [] as BidRecord[], waitMs: 0 };
    let plan = planning ? await planning : undefined;
    let paid: readonly Candidate[] = plan ? [...plan.paid, ...(plan.rtb ? rtb.candidates : [])] : [];
    let fill = !plan || plan.fill ? catalogDemand.fill : [];
    const refused = new Map<Candidate, string>();
    const pick = (pool: readonly Candidate[]) => pool[fnv1a32(viewerKey) % pool.length];
    for (;;) {
      const outcome = decideAuction(paid, fill, at, pick);
      // The winner's delivery and its part of the email open, claimed in one atomic step.
      const claim = plan
        ? await generation.priority.settle(outcome.filled ? outcome.winner : undefined, plan, ctx)
        : undefined;
      if (claim?.kind === 'drop' && outcome.filled) {
        paid = paid.filter((c) => c !== outcome.winner);
        continue;
      }
      if (claim?.kind === 'serve' && plan) {
        paid = claim.candidate ? [claim.candidate] : [];
        fill = [];
        plan = { ...plan, roadblocked: true };
        continue;
      }
      const creative = outcome.filled
        ? await this.creativeOf(ctx, outcome.winner, outcome.clearingMicros)
        : undefined;
      if (outcome.filled && typeof creative === 'string' && paid.includes(outcome.winner)) {
        refused.set(outcome.winner, creative);
        paid = paid.filter((c) => c !== outcome.winner);
        continue;
      }
      // A house or fallback ad without an image leaves the slot empty rather than loop.
      const final =
        outcome.filled && typeof creative === 'string'
          ? ({ filled: false, reason: NoFillReason.NoDemand } as const)
          : outcome;
      const winner = final.filled ? final.winner : undefined;
      const won = winner?.rtb && final.filled ? macroValues(ctx, winner, final.clearingMicros) : undefined;
      auctionDuration.observe((performance.now() - started) / 1000);
      const settled = settleAuction({
        ctx,
        outcome: final,
        creative: typeof creative === 'string' ? undefined : creative,
        records: rtb.records,
        refused,
        winnerDimensions: (candidate) => this.winnerDimensions(generation, candidate),
        winNotice: won && winner?.rtb?.nurl ? substituteMacros(winner.rtb.nurl, won) : undefined,
        billingNotice: won && winner?.rtb?.burl ? substituteMacros(winner.rtb.burl, won) : undefined,
        dspWaitMs: rtb.waitMs,
      });
      for (const bid of settled.bids) {
        bidOutcomes.inc({
          dsp: bid.dspId,
          status: bid.status,
          reason: bid.reason ?? '',
          loss_code: bid.lossCode === undefined ? '' : String(bid.lossCode),
        });
      }
      if (settled.lossNoticesDropped > 0) {
        trackerCalls.inc({ kind: 'loss_notice', result: 'dropped' }, settled.lossNoticesDropped);
      }
      return settled;
    }
  }

  private winnerDimensions(generation: CatalogGeneration, candidate: Candidate): WinnerDimensions {
    const key = `${candidate.strategyId}\n${candidate.creativeId}\n${candidate.advertiserDomain}\n${candidate.demandType}`;
    const lineage = generation.lineage;
    let dimensions = lineage.get(key);
    if (!dimensions) {
      dimensions = Object.freeze(winnerDimensions(generation.catalog, candidate));
      if (lineage.size >= 10_000) {
        lineage.clear();
      }
      lineage.set(key, dimensions);
    }
    return dimensions;
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
    const macros = macroValues(ctx, winner, clearingMicros);
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
    // The markup was parsed when the bid was judged: only the clearing price is new here.
    const markup = extractMarkupWith(rtb.adm, macros);
    return markup.ok
      ? {
          imageUrl: markup.imageUrl,
          clickUrl: markup.clickUrl,
          impressionTrackers: markup.trackers,
          clickTrackers: [],
        }
      : BidRejectionReason.InvalidMarkup;
  }
}

/** What the macros of the winner's markup, win and billing notices stand for. */
function macroValues(ctx: AdContext, winner: Candidate, clearingMicros: number): MacroValues {
  return {
    auctionId: ctx.auctionId,
    bidId: winner.rtb?.macroBidId ?? '',
    impId: winner.rtb?.impId ?? '',
    seatId: winner.rtb?.seat ?? '',
    adId: winner.rtb?.adId ?? '',
    priceMicros: clearingMicros,
    bidPriceMicros: winner.priceMicros,
    lossCode: 0,
  };
}
