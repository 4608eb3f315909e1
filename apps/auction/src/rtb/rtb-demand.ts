import type { Catalog, DspRecord } from '@app/catalog';
import type { BidStatus } from '@app/events';
import {
  BidRejectionReason,
  cpmToMicros,
  extractMarkup,
  substituteMacros,
  validateBidResponse,
  validateNativeMarkup,
  type AcceptedBid,
  type BidRequest,
  type NativeRequest,
} from '@app/openrtb';
import type { AdContext } from '../core/ad-context';
import type { AuctionType } from '../core/auction';
import { buildBidRequest, IMP_ID } from '../core/bid-request.builder';
import type { Candidate } from '../core/candidate';
import { AnswerOutcome, type BidderAnswer, type BidderClient } from './bidder.client';

/** What became of one DSP's answer, or of one bid in it: the content of a `bid` event. */
export interface BidRecord {
  readonly dspId: string;
  status: BidStatus;
  reason?: string;
  readonly priceMicros?: number;
  readonly dealId?: string;
  readonly seat?: string;
  readonly candidate?: Candidate;
  readonly elapsedMs: number;
}

export interface RtbResult {
  readonly candidates: readonly Candidate[];
  readonly records: readonly BidRecord[];
  /** The bid request each DSP was sent, for tests and debugging. */
  readonly requests: ReadonlyMap<string, BidRequest>;
  /** Time spent waiting for the DSPs, ms: the part of an ad request that is not ours. */
  readonly waitMs: number;
}

export interface RtbOptions {
  readonly tmaxMs: number;
}

/** Answers that carry no bid, from the client's outcome. */
const OUTCOME_STATUS: Readonly<Record<Exclude<AnswerOutcome, AnswerOutcome.Answered>, BidStatus>> = {
  [AnswerOutcome.Timeout]: 'timeout',
  [AnswerOutcome.TooLarge]: 'error',
  [AnswerOutcome.Error]: 'error',
};

/**
 * The RTB half of an auction: one OpenRTB request to every eligible DSP in parallel, each answer
 * read within what is left of `tmax`, every bid validated (part 2.10 and our rules) and its
 * markup checked after macro substitution. A rejected bid is a record with its reason, never a
 * candidate.
 */
export class RtbDemand {
  constructor(
    private readonly catalog: Catalog,
    private readonly client: BidderClient,
    private readonly options: RtbOptions,
  ) {}

  /** The DSPs to ask: not paused, and, for those that want matched users only, matched with this one. */
  eligibleDsps(ctx: AdContext): DspRecord[] {
    return this.catalog.document.dsps.filter(
      (dsp) => !dsp.paused && (!dsp.matchedUsersOnly || ctx.viewer.buyerUids?.has(dsp.id) === true),
    );
  }

  async collect(
    ctx: AdContext,
    dsps: readonly DspRecord[],
    deadline: number,
    at: AuctionType,
  ): Promise<RtbResult> {
    const requests = new Map<string, BidRequest>();
    const sent = performance.now();
    const answers = await Promise.all(
      dsps.map((dsp) => {
        const request = buildBidRequest(ctx, dsp, {
          at,
          tmaxMs: this.options.tmaxMs,
          buyerUid: ctx.viewer.buyerUids?.get(dsp.id),
        });
        requests.set(dsp.id, request);
        const budget = Math.min(dsp.timeoutMs ?? this.options.tmaxMs, deadline - performance.now());
        return this.client.send(dsp.endpoint, JSON.stringify(request), budget);
      }),
    );
    const waitMs = performance.now() - sent;
    const candidates: Candidate[] = [];
    const records: BidRecord[] = [];
    answers.forEach((answer, i) => {
      const dsp = dsps[i];
      const result = this.judge(dsp, requests.get(dsp.id)!, answer);
      candidates.push(...result.candidates);
      records.push(...result.records);
    });
    return { candidates, records, requests, waitMs };
  }

  private judge(
    dsp: DspRecord,
    request: BidRequest,
    answer: BidderAnswer,
  ): { candidates: Candidate[]; records: BidRecord[] } {
    const base = { dspId: dsp.id, elapsedMs: answer.elapsedMs };
    if (answer.outcome !== AnswerOutcome.Answered) {
      return {
        candidates: [],
        records: [{ ...base, status: OUTCOME_STATUS[answer.outcome], reason: answer.outcome }],
      };
    }
    const verdict = validateBidResponse({
      status: answer.status ?? 0,
      body: answer.body,
      request,
      seats: dsp.seats.map((s) => s.id),
    });
    const records: BidRecord[] = verdict.rejected.map((r) => ({
      ...base,
      status: 'rejected',
      reason: r.reason,
      priceMicros: r.priceMicros,
      seat: r.seat,
    }));
    const candidates: Candidate[] = [];
    for (const accepted of verdict.accepted) {
      const candidate = this.candidateOf(dsp, request, accepted);
      if (typeof candidate === 'string') {
        records.push({ ...base, status: 'rejected', reason: candidate, priceMicros: accepted.priceMicros });
        continue;
      }
      candidates.push(candidate);
      records.push({
        ...base,
        status: 'lost',
        priceMicros: accepted.priceMicros,
        dealId: accepted.dealId,
        seat: candidate.rtb!.seat,
        candidate,
      });
    }
    if (verdict.noBid !== undefined && records.length === 0) {
      records.push({ ...base, status: 'no_bid', reason: verdict.noBid });
    }
    return { candidates, records };
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
    // auction, and a price is digits and a dot, so it cannot make a valid URL invalid.
    const macros = {
      auctionId: request.id,
      impId: accepted.impid,
      adId: bid.adid ?? '',
      priceMicros: accepted.priceMicros,
    };
    const nativeRequest = imp.native ? nativeRequestOf(imp.native.request) : undefined;
    if (nativeRequest) {
      const native = validateNativeMarkup(adm, nativeRequest, macros);
      if (!native.ok) {
        return native.reason;
      }
    } else if (!extractMarkup(substituteMacros(adm, macros)).ok) {
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
        impId: accepted.impid ?? IMP_ID,
        adId: bid.adid ?? '',
        dealId: accepted.dealId,
        floorMicros,
        adm,
        nurl: bid.nurl,
        crid,
        nativeRequest,
      },
    };
  }
}

/** The native request we sent, in whichever form the DSP gets it. */
function nativeRequestOf(request: string | NativeRequest): NativeRequest {
  return typeof request === 'string' ? (JSON.parse(request) as NativeRequest) : request;
}
