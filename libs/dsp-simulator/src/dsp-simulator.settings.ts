/**
 * Faults of native answers: each corrupts the native bids of an answer (its banner bids stay sound)
 * and applies only to a request with a native imp that can carry it; otherwise the answer is normal.
 */
export const NATIVE_FAULTS = [
  'native_missing_assets',
  'native_wrong_ids',
  'native_title_too_long',
  'native_huge_image',
  'native_image_never_answers',
  'native_bad_link',
  'native_wrong_types',
  'native_not_json',
  'native_price_macro_tracker',
] as const;
export type NativeFault = (typeof NATIVE_FAULTS)[number];

export const DSP_FAULTS = [
  'invalid_json',
  'huge_body',
  'endless_body',
  'slow_drip',
  'wrong_request_id',
  'wrong_imp_id',
  'negative_price',
  'absurd_price',
  'price_as_string',
  'script_markup',
  'no_markup',
  'redirect',
  'http_500',
  'late',
  'empty_200',
  'wrong_types',
  'wrong_currency',
  'blocked_adomain',
  ...NATIVE_FAULTS,
] as const;
export type DspFault = (typeof DSP_FAULTS)[number];

export function isDspFault(name: string): name is DspFault {
  return (DSP_FAULTS as readonly string[]).includes(name);
}

export function isNativeFault(name: string): name is NativeFault {
  return (NATIVE_FAULTS as readonly string[]).includes(name);
}

/**
 * Hostile answers of the user sync endpoint: a bidder_uuid carrying a script, a 10 KB bidder_uuid,
 * a redirect to a foreign host instead of the callback, a 200 pixel instead of a redirect.
 */
export const SYNC_FAULTS = ['script_uuid', 'huge_uuid', 'open_redirect', 'no_redirect'] as const;
export type SyncFault = (typeof SYNC_FAULTS)[number];

export function isSyncFault(name: string): name is SyncFault {
  return (SYNC_FAULTS as readonly string[]).includes(name);
}

/** Real: title, description, sponsored and main image; static: the whole ad as one image (type 505). */
export const NATIVE_MODES = ['real', 'static', 'mixed'] as const;
export type NativeMode = (typeof NATIVE_MODES)[number];

export function isNativeMode(name: string): name is NativeMode {
  return (NATIVE_MODES as readonly string[]).includes(name);
}

/** Inclusive bounds of a uniform draw. */
export interface UniformRange {
  readonly min: number;
  readonly max: number;
}

/** What a running simulator can change through `configure()`. */
export interface DspBehaviour {
  /** Delay before answering, drawn uniformly per request; default 0. */
  latencyMs?: UniformRange;
  /** Probability (0..1) of bidding on each eligible impression; a request without bids gets 204. Default 1. */
  bidRate?: number;
  /** Bid price, USD CPM, drawn uniformly and rounded to cents; default 0.5..3. */
  priceCpm?: UniformRange;
  /** `seatbid.seat`, also matched against a deal's `wseat`; default `simulated-seat`. */
  seat?: string;
  /** Default `['simulated-advertiser.example']`. A request whose `badv` lists one gets no bid. */
  adomain?: readonly string[];
  /** Creative categories; omitted from bids when empty. A request whose `bcat` lists one gets no bid. */
  cat?: readonly string[];
  /**
   * Bid on deals: when an imp has `pmp.deals`, bid on the first deal whose `wseat` allows `seat`, at
   * max(price, deal floor). A private auction (`pmp.private_auction` 1) without such a deal, or with
   * deals off, gets no bid on that imp. Default false.
   */
  deals?: boolean;
  /**
   * Weighted faults, each applied to that share of valid bid requests instead of a normal answer.
   * Shares add up to 1 at most; a new map replaces the previous one.
   */
  faults?: Partial<Record<DspFault, number>>;
  /** Include a win notice URL with `${AUCTION_PRICE}` and the other macros; default false. */
  nurl?: boolean;
  /**
   * Include a billing notice (`burl`, at `/bill`) and a loss notice (`lurl`, at `/loss`) in every
   * bid, each with all nine OpenRTB 2.5 macros, and a `bidid` in every answer; default false.
   */
  notices?: boolean;
  /** Say each bid's markup type (`mtype`, OpenRTB 2.6: 1 banner, 4 native); default false. */
  mtype?: boolean;
  /**
   * The native answers: `real` (the default), `static`, or `mixed`, alternating the two. A request
   * allowing only the other kind (its assets, or assets it requires) gets that kind.
   */
  native?: NativeMode;
  /** Native markup as `{"native":{...}}` (the default) or, false, the bare native response object. */
  nativeWrapper?: boolean;
  /** Share (0..1) of synced users given a bidder_uuid; the others get an empty one. Default 1. */
  syncMatchRate?: number;
  /** Whole seconds after which the exchange should sync a user again; 0 (the default) for never. */
  syncExpirationSeconds?: number;
  /** Bid only when `user.buyeruid` is a user id this simulator issued through its sync endpoint. */
  matchedOnlyBids?: boolean;
  /** A hostile answer for every sync request to come; null clears it. */
  syncFault?: SyncFault | null;
  /** Source of every random draw, in [0, 1); seeded in tests. Default Math.random. */
  random?: () => number;
}

export interface DspSimulatorOptions extends DspBehaviour {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Base URL the simulator is reachable at, for the URLs in its markup; default its own address. */
  publicUrl?: string;
}

/** Fault shares as cumulative upper bounds, so one draw picks a fault or none. */
type FaultTable = readonly (readonly [DspFault, number])[];

export interface DspSettings {
  readonly latencyMs: UniformRange;
  readonly bidRate: number;
  readonly priceCpm: UniformRange;
  readonly seat: string;
  readonly adomain: readonly string[];
  readonly cat: readonly string[];
  readonly deals: boolean;
  readonly faults: FaultTable;
  readonly nurl: boolean;
  readonly notices: boolean;
  readonly mtype: boolean;
  readonly native: NativeMode;
  readonly nativeWrapper: boolean;
  readonly syncMatchRate: number;
  readonly syncExpirationSeconds: number;
  readonly matchedOnlyBids: boolean;
  readonly syncFault: SyncFault | undefined;
  readonly random: () => number;
}

export const DEFAULT_SETTINGS: DspSettings = {
  latencyMs: { min: 0, max: 0 },
  bidRate: 1,
  priceCpm: { min: 0.5, max: 3 },
  seat: 'simulated-seat',
  adomain: ['simulated-advertiser.example'],
  cat: [],
  deals: false,
  faults: [],
  nurl: false,
  notices: false,
  mtype: false,
  native: 'real',
  nativeWrapper: true,
  syncMatchRate: 1,
  syncExpirationSeconds: 0,
  matchedOnlyBids: false,
  syncFault: undefined,
  random: Math.random,
};

/** The settings with the patch's defined fields applied; throws a RangeError, changing nothing, when invalid. */
export function applyBehaviour(current: DspSettings, patch: DspBehaviour): DspSettings {
  const next: DspSettings = {
    latencyMs: patch.latencyMs ? checkedRange('latencyMs', patch.latencyMs) : current.latencyMs,
    bidRate: patch.bidRate ?? current.bidRate,
    priceCpm: patch.priceCpm ? checkedRange('priceCpm', patch.priceCpm) : current.priceCpm,
    seat: patch.seat ?? current.seat,
    adomain: patch.adomain ? [...patch.adomain] : current.adomain,
    cat: patch.cat ? [...patch.cat] : current.cat,
    deals: patch.deals ?? current.deals,
    faults: patch.faults ? faultTable(patch.faults) : current.faults,
    nurl: patch.nurl ?? current.nurl,
    notices: patch.notices ?? current.notices,
    mtype: patch.mtype ?? current.mtype,
    native: patch.native ?? current.native,
    nativeWrapper: patch.nativeWrapper ?? current.nativeWrapper,
    syncMatchRate: patch.syncMatchRate ?? current.syncMatchRate,
    syncExpirationSeconds: patch.syncExpirationSeconds ?? current.syncExpirationSeconds,
    matchedOnlyBids: patch.matchedOnlyBids ?? current.matchedOnlyBids,
    syncFault: patch.syncFault === undefined ? current.syncFault : (patch.syncFault ?? undefined),
    random: patch.random ?? current.random,
  };
  if (!(next.bidRate >= 0 && next.bidRate <= 1)) {
    throw new RangeError(`bidRate must be between 0 and 1, got ${next.bidRate}`);
  }
  if (next.seat === '') {
    throw new RangeError('seat must not be empty');
  }
  // Checked at run time too: options also come from JSON (the benchmark) and plain JavaScript.
  if (!isNativeMode(next.native)) {
    throw new RangeError(`native must be one of ${NATIVE_MODES.join(', ')}, got ${String(next.native)}`);
  }
  if (!(next.syncMatchRate >= 0 && next.syncMatchRate <= 1)) {
    throw new RangeError(`syncMatchRate must be between 0 and 1, got ${next.syncMatchRate}`);
  }
  if (!(Number.isSafeInteger(next.syncExpirationSeconds) && next.syncExpirationSeconds >= 0)) {
    throw new RangeError(
      `syncExpirationSeconds must be a whole number >= 0, got ${next.syncExpirationSeconds}`,
    );
  }
  if (next.syncFault !== undefined && !isSyncFault(next.syncFault)) {
    throw new RangeError(`unknown sync fault ${String(next.syncFault)}; known: ${SYNC_FAULTS.join(', ')}`);
  }
  return next;
}

function checkedRange(name: string, range: UniformRange): UniformRange {
  const { min, max } = range;
  if (!(Number.isFinite(min) && Number.isFinite(max) && min >= 0 && min <= max)) {
    throw new RangeError(`${name} needs 0 <= min <= max, got ${min}..${max}`);
  }
  return { min, max };
}

function faultTable(faults: Partial<Record<string, number>>): FaultTable {
  const table: [DspFault, number][] = [];
  let total = 0;
  for (const [name, share = 0] of Object.entries(faults)) {
    if (!isDspFault(name)) {
      throw new RangeError(`unknown fault ${name}; known: ${DSP_FAULTS.join(', ')}`);
    }
    if (!(Number.isFinite(share) && share >= 0)) {
      throw new RangeError(`fault ${name} needs a share >= 0, got ${share}`);
    }
    if (share === 0) {
      continue;
    }
    total += share;
    table.push([name, total]);
  }
  // Shares such as 0.1 + 0.2 + 0.7 add up to slightly more than 1 in floating point.
  if (total > 1 + 1e-9) {
    throw new RangeError(`fault shares add up to ${total}, more than 1`);
  }
  return table;
}

/** The fault that replaces this request's answer, if any; draws only when faults are configured. */
export function pickFault(settings: DspSettings): DspFault | undefined {
  if (settings.faults.length === 0) {
    return undefined;
  }
  const draw = settings.random();
  for (const [fault, upTo] of settings.faults) {
    if (draw < upTo) {
      return fault;
    }
  }
  return undefined;
}

/** A uniform draw; a degenerate range draws nothing, so that fixed settings leave the sequence alone. */
export function drawUniform(range: UniformRange, random: () => number): number {
  return range.min === range.max ? range.min : range.min + random() * (range.max - range.min);
}

/** True with this probability; draws only strictly between 0 and 1, so that 0 and 1 leave the sequence alone. */
export function chance(probability: number, random: () => number): boolean {
  return probability >= 1 || (probability > 0 && random() < probability);
}
