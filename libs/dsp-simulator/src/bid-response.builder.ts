import { creativePath, isCreativeSide, type BannerSize } from './creative.renderer';
import {
  chance,
  drawUniform,
  type DspSettings,
  type NativeFault,
  type UniformRange,
} from './dsp-simulator.settings';
import {
  answerableKind,
  isAnswerable,
  nativeCreative,
  nativeMarkup,
  readNativeSlot,
  type NativeKind,
  type NativeSlot,
} from './native-response.builder';
import { faultyKind, faultyNativeMarkup, nativeFaultApplies } from './native.faults';

/**
 * The parts of an OpenRTB 2.5 bid request the simulator reads. Only `id` and `imp[].id` are
 * checked up front; the rest comes from an untrusted peer and is narrowed where it is read.
 */
export interface OpenRtbBidRequest {
  readonly id: string;
  readonly imp: readonly OpenRtbImp[];
  readonly badv?: unknown;
  readonly bcat?: unknown;
  readonly user?: unknown;
}

export interface OpenRtbImp {
  readonly id: string;
  readonly banner?: unknown;
  readonly native?: unknown;
  readonly pmp?: unknown;
}

/** An imp as the simulator reads it, once per request: its banner size and its native request, if usable. */
export interface ImpOffer {
  readonly imp: OpenRtbImp;
  readonly banner: BannerSize | undefined;
  readonly native: NativeSlot | undefined;
}

/** A native fault to apply, and how many answers it corrupted before. */
export interface NativeFaultDraw {
  readonly fault: NativeFault;
  readonly occurrence: number;
}

export interface OpenRtbBid {
  id: string;
  impid: string;
  price: number;
  adid: string;
  crid: string;
  cid: string;
  adomain: readonly string[];
  cat?: readonly string[];
  dealid?: string;
  adm?: string;
  nurl?: string;
  burl?: string;
  lurl?: string;
  /** OpenRTB 2.6's markup type: 1 banner, 4 native. */
  mtype?: 1 | 4;
}

export interface OpenRtbBidResponse {
  id: string;
  seatbid: { seat: string; bid: OpenRtbBid[] }[];
  cur: string;
  bidid?: string;
}

export interface BidContext {
  readonly settings: DspSettings;
  /** Base of the creative, landing, tracker and win notice URLs in the bids. */
  readonly baseUrl: string;
  readonly nextBidId: () => string;
  /** The kind the next native bid prefers: the setting's, alternating under `mixed`. */
  readonly nextNativeKind: () => NativeKind;
}

interface Creative {
  readonly crid: string;
  readonly adm: string;
  readonly mtype: 1 | 4;
}

/** Every macro of OpenRTB 2.5 section 4.4, as the query of a billing or loss notice. */
const ALL_MACROS =
  'auction=${AUCTION_ID}&bid=${AUCTION_BID_ID}&imp=${AUCTION_IMP_ID}&seat=${AUCTION_SEAT_ID}' +
  '&ad=${AUCTION_AD_ID}&price=${AUCTION_PRICE}&cur=${AUCTION_CURRENCY}&mbr=${AUCTION_MBR}&loss=${AUCTION_LOSS}';

/** The size fault answers bid with on an imp without a usable banner, so that every imp gets a bid. */
const FALLBACK_SIZE: BannerSize = { w: 300, h: 250 };

export function isBidRequest(body: unknown): body is OpenRtbBidRequest {
  if (!isRecord(body) || typeof body.id !== 'string') {
    return false;
  }
  const { imp } = body;
  return Array.isArray(imp) && imp.length > 0 && imp.every((i) => isRecord(i) && typeof i.id === 'string');
}

/** Each imp's banner size and native request, read once for the draw of a fault and the bids. */
export function readImps(request: OpenRtbBidRequest): ImpOffer[] {
  return request.imp.map((imp) => ({
    imp,
    banner: bannerSize(imp),
    native: imp.native === undefined ? undefined : readNativeSlot(imp.native),
  }));
}

/**
 * The bids of a well-behaved DSP, honouring badv, bcat, private auctions and deals: a native ad on
 * an imp whose native request it can fill, else a banner on an imp with a usable banner size.
 */
export function chooseBids(
  offers: readonly ImpOffer[],
  request: OpenRtbBidRequest,
  context: BidContext,
): OpenRtbBid[] {
  const { settings } = context;
  const bids: OpenRtbBid[] = [];
  if (isBlocked(request, settings)) {
    return bids;
  }
  for (const { imp, banner, native } of offers) {
    const slot = native && isAnswerable(native) ? native : undefined;
    if (!slot && !banner) {
      continue;
    }
    const pmp = isRecord(imp.pmp) ? imp.pmp : undefined;
    const deal = settings.deals && pmp ? eligibleDeal(pmp, settings.seat) : undefined;
    if (!deal && pmp?.private_auction === 1) {
      continue;
    }
    if (!chance(settings.bidRate, settings.random)) {
      continue;
    }
    const price = drawPrice(settings.priceCpm, settings.random);
    const creative = slot
      ? soundNative(context, slot, answerableKind(slot, context.nextNativeKind()) ?? 'real')
      : bannerCreative(context, banner ?? FALLBACK_SIZE);
    bids.push(
      deal
        ? makeBid(context, imp.id, creative, Math.max(price, centsAtLeast(deal.floor)), deal.id)
        : makeBid(context, imp.id, creative, price),
    );
  }
  return bids;
}

/**
 * One open-market bid per imp, whatever the filters say: the well-formed base that faults corrupt.
 * With a native fault, the native bids that can carry it carry it; the other bids stay sound.
 */
export function bidOnEveryImp(
  offers: readonly ImpOffer[],
  context: BidContext,
  nativeFault?: NativeFaultDraw,
): OpenRtbBid[] {
  const { priceCpm, random } = context.settings;
  return offers.map(({ imp, banner, native }) => {
    const price = drawPrice(priceCpm, random);
    let creative: Creative;
    if (native && nativeFault && nativeFaultApplies(nativeFault.fault, native)) {
      creative = faultyNative(context, native, nativeFault);
    } else if (native && isAnswerable(native)) {
      creative = soundNative(context, native, answerableKind(native, context.nextNativeKind()) ?? 'real');
    } else {
      creative = bannerCreative(context, banner ?? FALLBACK_SIZE);
    }
    return makeBid(context, imp.id, creative, price);
  });
}

/** Whether a native fault applies to the request: it has a native imp that can carry it. */
export function carriesNativeFault(offers: readonly ImpOffer[], fault: NativeFault): boolean {
  return offers.some(({ native }) => native !== undefined && nativeFaultApplies(fault, native));
}

/** A response with its bids; `bidid`, when given, is the response's own id (`${AUCTION_BID_ID}`). */
export function bidResponse(
  requestId: string,
  seat: string,
  bids: OpenRtbBid[],
  bidid?: string,
): OpenRtbBidResponse {
  const response: OpenRtbBidResponse = { id: requestId, seatbid: [{ seat, bid: bids }], cur: 'USD' };
  if (bidid !== undefined) {
    response.bidid = bidid;
  }
  return response;
}

/**
 * An anchor wrapping the creative, then an impression pixel: the "extended" structure of the bidding
 * specification (2.12, docs/specification-notes.md#bidding-part-2-12). Macros are left for the exchange,
 * which substitutes them wherever found.
 */
export function bannerMarkup(baseUrl: string, crid: string, size: BannerSize): string {
  const creative = `crid=${encodeURIComponent(crid)}`;
  return (
    `<a href="${baseUrl}/landing?${creative}&imp=\${AUCTION_IMP_ID}">` +
    `<img src="${baseUrl}${creativePath(size)}?${creative}" width="${size.w}" height="${size.h}"></a>` +
    `<img src="${baseUrl}/imp?auction=\${AUCTION_ID}&price=\${AUCTION_PRICE}" width="1" height="1">`
  );
}

function makeBid(
  context: BidContext,
  impid: string,
  creative: Creative,
  price: number,
  dealid?: string,
): OpenRtbBid {
  const { seat, adomain, cat, nurl, notices, mtype } = context.settings;
  const bid: OpenRtbBid = {
    id: context.nextBidId(),
    impid,
    price,
    adid: creative.crid,
    crid: creative.crid,
    cid: `${seat}-campaign`,
    adomain,
    adm: creative.adm,
  };
  if (cat.length > 0) {
    bid.cat = cat;
  }
  if (dealid !== undefined) {
    bid.dealid = dealid;
  }
  if (nurl) {
    bid.nurl = `${context.baseUrl}/win?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}&price=\${AUCTION_PRICE}`;
  }
  if (notices) {
    bid.burl = `${context.baseUrl}/bill?${ALL_MACROS}`;
    bid.lurl = `${context.baseUrl}/loss?${ALL_MACROS}`;
  }
  if (mtype) {
    bid.mtype = creative.mtype;
  }
  return bid;
}

function bannerCreative(context: BidContext, size: BannerSize): Creative {
  const crid = `${context.settings.seat}-${size.w}x${size.h}`;
  return { crid, adm: bannerMarkup(context.baseUrl, crid, size), mtype: 1 };
}

function soundNative(context: BidContext, slot: NativeSlot, kind: NativeKind): Creative {
  const { crid, response } = nativeCreative(slot, kind, nativeContext(context));
  return { crid, adm: nativeMarkup(response, context.settings.nativeWrapper), mtype: 4 };
}

function faultyNative(context: BidContext, slot: NativeSlot, draw: NativeFaultDraw): Creative {
  const kind = faultyKind(draw.fault, slot, context.nextNativeKind());
  const creative = nativeCreative(slot, kind, nativeContext(context));
  const { baseUrl, settings } = context;
  const faultContext = { baseUrl, wrapper: settings.nativeWrapper, occurrence: draw.occurrence };
  return {
    crid: creative.crid,
    adm: faultyNativeMarkup(draw.fault, creative, slot, faultContext),
    mtype: 4,
  };
}

function nativeContext(context: BidContext): { baseUrl: string; seat: string; advertiser: string } {
  const { seat, adomain } = context.settings;
  return { baseUrl: context.baseUrl, seat, advertiser: adomain[0] ?? seat };
}

function bannerSize(imp: OpenRtbImp): BannerSize | undefined {
  const { banner } = imp;
  if (!isRecord(banner)) {
    return undefined;
  }
  const { w, h } = banner;
  return isCreativeSide(w) && isCreativeSide(h) ? { w, h } : undefined;
}

function isBlocked(request: OpenRtbBidRequest, settings: DspSettings): boolean {
  const { badv, bcat } = request;
  return (
    (Array.isArray(badv) && settings.adomain.some((domain) => badv.includes(domain))) ||
    (Array.isArray(bcat) && settings.cat.some((category) => bcat.includes(category)))
  );
}

/** The first deal open to the seat; a deal without `wseat` (or an empty one) restricts no seat. */
function eligibleDeal(pmp: Record<string, unknown>, seat: string): { id: string; floor: number } | undefined {
  if (!Array.isArray(pmp.deals)) {
    return undefined;
  }
  for (const deal of pmp.deals as unknown[]) {
    if (!isRecord(deal) || typeof deal.id !== 'string') {
      continue;
    }
    const { wseat, bidfloor } = deal;
    if (Array.isArray(wseat) && wseat.length > 0 && !wseat.includes(seat)) {
      continue;
    }
    return {
      id: deal.id,
      floor: typeof bidfloor === 'number' && Number.isFinite(bidfloor) && bidfloor > 0 ? bidfloor : 0,
    };
  }
  return undefined;
}

function drawPrice(range: UniformRange, random: () => number): number {
  return Math.round(drawUniform(range, random) * 100) / 100;
}

/** The smallest whole-cent price not below the floor; 5.55 * 100 is 555.0000000000001 in floating point. */
function centsAtLeast(floor: number): number {
  return Math.ceil(Math.round(floor * 1e6) / 1e4) / 100;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
