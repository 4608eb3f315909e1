import type { DspRecord } from '@app/catalog';
import { dspHealth, dspThrottled } from '@app/observability';

export interface DspTrafficOptions {
  /** The auction processes sharing each DSP's QPS cap (each takes its share). */
  readonly workers: number;
  /** Share of recent calls that failed (timeouts, errors) past which a DSP counts as unhealthy. */
  readonly unhealthyFailureShare: number;
  /** Share of the bid requests an unhealthy DSP still gets, to see whether it recovered. */
  readonly unhealthyTrafficShare: number;
  readonly now?: () => number;
}

export enum ThrottleReason {
  QpsCap = 'qps_cap',
  Unhealthy = 'unhealthy',
}

/** How many recent calls the failure share is an average of (exponentially weighted). */
const HEALTH_WINDOW_CALLS = 50;

/** One DSP's traffic: its token bucket (QPS cap) and its recent failure share. */
class DspLane {
  private tokens: number;
  private refilledAt: number;
  /** Exponentially weighted share of recent calls that failed. */
  failureShare = 0;
  /** Requests an unhealthy DSP is due, credited a share per request. */
  private probeCredit = 0;
  /** The failure share last put in the gauge. */
  reported = 0;

  constructor(
    private readonly ratePerMs: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.refilledAt = now;
  }

  takeToken(now: number): boolean {
    if (!Number.isFinite(this.ratePerMs)) {
      return true;
    }
    this.tokens = Math.min(this.burst, this.tokens + (now - this.refilledAt) * this.ratePerMs);
    this.refilledAt = now;
    if (this.tokens < 1) {
      return false;
    }
    this.tokens -= 1;
    return true;
  }

  probe(share: number): boolean {
    this.probeCredit += share;
    if (this.probeCredit < 1) {
      return false;
    }
    this.probeCredit -= 1;
    return true;
  }
}

/**
 * Per-DSP traffic controls. A DSP's `maxQps` in the catalog caps the bid requests it gets (a token
 * bucket per worker with the worker's share of the cap, holding a tenth of a second's requests);
 * a DSP whose recent calls time out or fail above `unhealthyFailureShare` gets only
 * `unhealthyTrafficShare` of the requests, whose outcomes keep measuring it, so that it gets its
 * full share back by itself once it answers again. A request not sent is counted as throttled.
 */
export class DspTraffic {
  private readonly lanes = new Map<string, DspLane>();
  private readonly now: () => number;

  constructor(
    dsps: readonly DspRecord[],
    private readonly options: DspTrafficOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
    const now = this.now();
    for (const dsp of dsps) {
      const perSecond = dsp.maxQps === undefined ? Number.POSITIVE_INFINITY : dsp.maxQps / options.workers;
      this.lanes.set(dsp.id, new DspLane(perSecond / 1000, Math.max(1, perSecond / 10), now));
    }
  }

  /** Whether this auction may ask the DSP; a refusal is counted with its reason. */
  allow(dsp: DspRecord): boolean {
    const lane = this.lanes.get(dsp.id);
    if (!lane) {
      return true;
    }
    if (this.unhealthy(lane) && !lane.probe(this.options.unhealthyTrafficShare)) {
      dspThrottled.inc({ dsp: dsp.id, reason: ThrottleReason.Unhealthy });
      return false;
    }
    if (!lane.takeToken(this.now())) {
      dspThrottled.inc({ dsp: dsp.id, reason: ThrottleReason.QpsCap });
      return false;
    }
    return true;
  }

  /** The outcome of a call: `failed` for a timeout, a connection error or a server error. */
  record(dspId: string, failed: boolean): void {
    const lane = this.lanes.get(dspId);
    if (!lane) {
      return;
    }
    lane.failureShare += ((failed ? 1 : 0) - lane.failureShare) / HEALTH_WINDOW_CALLS;
    // The gauge follows by steps of a percent: no label lookup for every answer.
    if (
      Math.abs(lane.failureShare - lane.reported) >= 0.01 ||
      (lane.failureShare === 0) !== (lane.reported === 0)
    ) {
      lane.reported = lane.failureShare;
      dspHealth.set({ dsp: dspId }, Math.round(lane.failureShare * 1000) / 1000);
    }
  }

  /** A DSP's recent failure share, and whether it is throttled for it. */
  health(dspId: string): { failureShare: number; unhealthy: boolean } | undefined {
    const lane = this.lanes.get(dspId);
    return lane && { failureShare: lane.failureShare, unhealthy: this.unhealthy(lane) };
  }

  private unhealthy(lane: DspLane): boolean {
    return lane.failureShare > this.options.unhealthyFailureShare;
  }
}
