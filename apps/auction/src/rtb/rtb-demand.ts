import type { Catalog, DspRecord } from '@app/catalog';
import type { BidStatus } from '@app/events';
import {
  BidRejectionReason,
  cpmToMicros,
  checkMarkupWith,
  validateBidResponse,
  validateNativeMarkup,
  type AcceptedBid,
  type BidRequest,
  type MacroValues,
  type NativeRequest,
  type RejectedBid,
} from '@app/openrtb';
import type { AdContext } from '../core/ad-context';
import type { AuctionType } from '../core/auction';
import { BidRequestBodies, IMP_ID } from '../core/bid-request.builder';
import type { BidMacroIds, BidRecord, Candidate } from '../core/candidate';
import { AnswerOutcome, type BidderAnswer, type BidderCall, type BidderClient } from './bidder.client';
import type { DspTraffic } from './dsp-traffic';

export interface RtbResult {
  readonly candidates: readonly Candidate[];
  readonly records: readonly BidRecord[];
  /** Time spent waiting for the DSPs, ms: the part of an ad request that is not ours. */
  readonly waitMs: number;
}

export interface RtbOptions {
  readonly tmaxMs: number;
  /** The exchange's domain, the `asi` of the supply chain node of its bid requests. */
  readonly exchangeDomain: string;
}

/** Answers that carry no bid, from the client's outcome. */
const OUTCOME_STATUS: Readonly<Record<Exclude<AnswerOutcome, AnswerOutcome.Answered>, BidStatus>> = {
  [AnswerOutcome.Timeout]: 'timeout',
  [AnswerOutcome.TooLarge]: 'error',
  [AnswerOutcome.Error]: 'error',
};

/**
 * The RTB half of an auction: one OpenRTB request to every eligible DSP in parallel (serialised once), each
 * answer read within what is left of `tmax`, every bid validated (bidding part 2.10,
 * docs/specification-notes.md#bidding-part-2-10, and our rules) and its markup checked after macro
 * substitution. A rejected bid is a record with its reason, never a candidate.
 */
export class RtbDemand {
  /** Each DSP's seat ids, as the validator takes them. */
  private readonly seats = new Map<string, string[]>();

  constructor(
    private readonly catalog: Catalog,
    private readonly client: BidderClient,
    private readonly traffic: DspTraffic,
    private readonly options: RtbOptions,
  ) {
    for (const dsp of catalog.document.dsps) {
      this.seats.set(
        dsp.id,
        dsp.seats.map((s) => s.id),
      );
    }
  }

  /**
   * The DSPs to ask: not paused, for those that want matched users only matched with this one,
   * and within their traffic controls (QPS cap, health).
   */
  eligibleDsps(ctx: AdContext): DspRecord[] {
    return this.catalog.document.dsps.filter(
      (dsp) =>
        !dsp.paused &&
        (!dsp.matchedUsersOnly || ctx.viewer.buyerUids?.has(dsp.id) === true) &&
        this.traffic.allow(dsp),
    );
  }

  async collect(
    ctx: AdContext,
    dsps: readonly DspRecord[],
    deadline: number,
    at: AuctionType,
  ): Promise<RtbResult> {
    const bodies = new BidRequestBodies(ctx, {
      at,
      tmaxMs: this.options.tmaxMs,
      exchangeDomain: this.options.exchangeDomain,
    });
    const sent = performance.now();
    // tmax runs from when the request reached the process, not from when its auction began.
    const due =
      ctx.arrivedAt === undefined ? deadline : Math.min(deadline, ctx.arrivedAt + this.options.tmaxMs);
    const calls: BidderCall[] = dsps.map((dsp) => ({
      endpoint: dsp.endpoint,
      body: bodies.bodyFor(dsp, ctx.viewer.buyerUids?.get(dsp.id)),
      timeoutMs: Math.min(dsp.timeoutMs ?? this.options.tmaxMs, due - sent),
      openrtbVersion: dsp.openrtbVersion,
    }));
    const answers = await this.client.sendAll(calls);
    const waitMs = performance.now() - sent;
    answers.forEach((answer, i) =>
      this.traffic.record(
        dsps[i].id,
        answer.outcome !== AnswerOutcome.Answered || (answer.status ?? 0) >= 500,
      ),
    );
    const candidates: Candidate[] = [];
    const records: BidRecord[] = [];
    answers.forEach((answer, i) =>
      this.judge(dsps[i], bodies.requestFor(dsps[i]), answer, candidates, records),
    );
    return { candidates, records, waitMs };
  }

  /** Adds a DSP's answer's candidates and records to the auction's. */
  private judge(
    dsp: DspRecord,
    request: BidRequest,
    answer: BidderAnswer,
    candidates: Candidate[],
    records: BidRecord[],
  ): void {
    if (answer.outcome !== AnswerOutcome.Answered) {
      records.push(recordOf(dsp, answer, OUTCOME_STATUS[answer.outcome], { reason: answer.outcome }));
      return;
    }
    const verdict = validateBidResponse({
      status: answer.status ?? 0,
      body: answer.body,
      request,
      seats: this.seats.get(dsp.id) ?? dsp.seats.map((s) => s.id),
    });
    const before = records.length;
    for (const r of verdict.rejected) {
      const notice = dsp.lossNotices ? lossNoticeOfRejected(dsp, request, r) : undefined;
      records.push(
        recordOf(dsp, answer, 'rejected', {
          reason: r.reason,
          priceMicros: r.priceMicros,
          seat: r.seat,
          lurl: notice?.lurl,
          macroIds: notice?.macroIds,
        }),
      );
    }
    for (const accepted of verdict.accepted) {
      const candidate = this.candidateOf(dsp, request, accepted);
      if (typeof candidate === 'string') {
        records.push(
          recordOf(dsp, answer, 'rejected', {
            reason: candidate,
            priceMicros: accepted.priceMicros,
            lurl: dsp.lossNotices ? accepted.bid.lurl : undefined,
            macroIds: dsp.lossNotices ? macroIdsOf(dsp, request, accepted) : undefined,
          }),
        );
        continue;
      }
      candidates.push(candidate);
      records.push(
        recordOf(dsp, answer, 'lost', {
          priceMicros: accepted.priceMicros,
          dealId: accepted.dealId,
          seat: candidate.rtb!.seat,
          candidate,
          lurl: dsp.lossNotices ? candidate.rtb!.lurl : undefined,
          macroIds: dsp.lossNotices ? macroIdsOf(dsp, request, accepted) : undefined,
        }),
      );
    }
    if (verdict.noBid !== undefined && records.length === before) {
      records.push(recordOf(dsp, answer, 'no_bid', { reason: verdict.noBid }));
    }
  }

  /** The candidate of an accepted bid, or the rejection reason when its markup does not hold. */
  private candidateOf(dsp: DspRecord, request: BidRequest, accepted: AcceptedBid): Candidate | string {
    const seatId = accepted.seat ?? dsp.seats[0].id;
    const seat = dsp.seats.find((s) => s.id === seatId) ?? dsp.seats[0];
    const { advertiser } = this.catalog.strategyLineage(seat.strategyId);
    const bid = accepted.bid;
    const adm = bid.adm ?? '';
    const imp = request.imp.find((i) => i.id === accepted.impid) ?? request.imp[0];
    // The markup must hold once its macros are filled in; the price is final only after the
    // auction, and a price (and the market bid ratio) is digits and a dot, so it cannot make a
    // valid URL invalid.
    // Written out rather than spread: a spread object given more fields took new hidden classes.
    const ids = macroIdsOf(dsp, request, accepted);
    const macros: MacroValues = {
      auctionId: ids.auctionId,
      bidId: ids.bidId,
      impId: ids.impId,
      seatId: ids.seatId,
      adId: ids.adId,
      priceMicros: accepted.priceMicros,
      bidPriceMicros: accepted.priceMicros,
      lossCode: 0,
    };
    const nativeRequest = imp.native ? nativeRequestOf(imp.native.request) : undefined;
    if (nativeRequest) {
      const native = validateNativeMarkup(adm, nativeRequest, macros);
      if (!native.ok) {
        return native.reason;
      }
    } else if (checkMarkupWith(adm, macros) !== undefined) {
      return BidRejectionReason.InvalidMarkup;
    }
    const deal = imp.pmp?.deals?.find((d) => d.id === accepted.dealId);
    const floorMicros = cpmToMicros(deal ? (deal.bidfloor ?? 0) : (imp.bidfloor ?? 0));
    const crid = bid.crid ?? bid.adid ?? bid.id;
    return {
      demandType: 'exchange',
      priceMicros: accepted.priceMicros,
      strategyId: seat.strategyId,
      creativeId: `${dsp.id}:${crid}`.slice(0, 128),
      advertiserDomain: (accepted.adomain[0] ?? advertiser?.domain ?? '').toLowerCase().slice(0, 256),
      rtb: {
        dspId: dsp.id,
        seat: seat.id,
        bidId: bid.id,
        macroBidId: accepted.responseBidId ?? bid.id,
        impId: accepted.impid ?? IMP_ID,
        adId: bid.adid ?? '',
        dealId: accepted.dealId,
        floorMicros,
        adm,
        nurl: bid.nurl,
        burl: bid.burl,
        lurl: bid.lurl,
        crid,
        nativeRequest,
      },
    };
  }
}

/**
 * A record of one answer or bid, every field set (undefined where it has none): records built by
 * spreading the optional fields in took a hidden class for each combination, and their making was
 * a tenth of the judging.
 */
function recordOf(
  dsp: DspRecord,
  answer: BidderAnswer,
  status: BidStatus,
  fields: Omit<BidRecord, 'dspId' | 'elapsedMs' | 'status'>,
): BidRecord {
  return {
    dspId: dsp.id,
    status,
    reason: fields.reason,
    priceMicros: fields.priceMicros,
    dealId: fields.dealId,
    seat: fields.seat,
    candidate: fields.candidate,
    elapsedMs: answer.elapsedMs,
    lurl: fields.lurl,
    macroIds: fields.macroIds,
  };
}

/** The native request we sent, in whichever form the DSP gets it. */
function nativeRequestOf(request: string | NativeRequest): NativeRequest {
  return typeof request === 'string' ? (JSON.parse(request) as NativeRequest) : request;
}

/** The macro ids of an accepted bid: its seat is the one it is booked on (the DSP's first without one). */
function macroIdsOf(dsp: DspRecord, request: BidRequest, accepted: AcceptedBid): BidMacroIds {
  return {
    auctionId: request.id,
    bidId: accepted.responseBidId ?? accepted.bid.id,
    impId: accepted.impid,
    seatId: accepted.seat ?? dsp.seats[0].id,
    adId: accepted.bid.adid ?? '',
  };
}

/**
 * The loss notice of a bid the validator refused: its `lurl` and ids as far as the bid, untrusted,
 * has them as strings (the guard checks the URL before any call, and macro values are encoded).
 */
function lossNoticeOfRejected(
  dsp: DspRecord,
  request: BidRequest,
  rejected: RejectedBid,
): Pick<BidRecord, 'lurl' | 'macroIds'> {
  const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const lurl = text(rejected.bid?.lurl);
  if (lurl === undefined) {
    return {};
  }
  return {
    lurl,
    macroIds: {
      auctionId: request.id,
      bidId: rejected.responseBidId ?? rejected.id ?? '',
      impId: rejected.impid ?? '',
      seatId: rejected.seat ?? dsp.seats[0].id,
      adId: text(rejected.bid?.adid) ?? '',
    },
  };
}
