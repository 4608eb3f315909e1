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
] as const;
export type DspFault = (typeof DSP_FAULTS)[number];

export function isDspFault(name: string): name is DspFault {
  return (DSP_FAULTS as readonly string[]).includes(name);
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
    random: patch.random ?? current.random,
  };
  if (!(next.bidRate >= 0 && next.bidRate <= 1)) {
    throw new RangeError(`bidRate must be between 0 and 1, got ${next.bidRate}`);
  }
  if (next.seat === '') throw new RangeError('seat must not be empty');
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
    if (!isDspFault(name)) throw new RangeError(`unknown fault ${name}; known: ${DSP_FAULTS.join(', ')}`);
    if (!(Number.isFinite(share) && share >= 0)) {
      throw new RangeError(`fault ${name} needs a share >= 0, got ${share}`);
    }
    if (share === 0) continue;
    total += share;
    table.push([name, total]);
  }
  // Shares such as 0.1 + 0.2 + 0.7 add up to slightly more than 1 in floating point.
  if (total > 1 + 1e-9) throw new RangeError(`fault shares add up to ${total}, more than 1`);
  return table;
}

/** The fault that replaces this request's answer, if any; draws only when faults are configured. */
export function pickFault(settings: DspSettings): DspFault | undefined {
  if (settings.faults.length === 0) return undefined;
  const draw = settings.random();
  for (const [fault, upTo] of settings.faults) if (draw < upTo) return fault;
  return undefined;
}

/** A uniform draw; a degenerate range draws nothing, so that fixed settings leave the sequence alone. */
export function drawUniform(range: UniformRange, random: () => number): number {
  return range.min === range.max ? range.min : range.min + random() * (range.max - range.min);
}
