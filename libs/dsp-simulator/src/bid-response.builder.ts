import { creativePath, isCreativeSide, type BannerSize } from './creative.renderer';
import { drawUniform, type DspSettings, type UniformRange } from './dsp-simulator.settings';

/**
 * The parts of an OpenRTB 2.5 bid request the simulator reads. Only `id` and `imp[].id` are
 * checked up front; the rest comes from an untrusted peer and is narrowed where it is read.
 */
export interface OpenRtbBidRequest {
  readonly id: string;
  readonly imp: readonly OpenRtbImp[];
  readonly badv?: unknown;
  readonly bcat?: unknown;
}

export interface OpenRtbImp {
  readonly id: string;
  readonly banner?: unknown;
  readonly pmp?: unknown;
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
}

export interface OpenRtbBidResponse {
  id: string;
  seatbid: { seat: string; bid: OpenRtbBid[] }[];
  cur: string;
}

export interface BidContext {
  readonly settings: DspSettings;
  /** Base of the creative, landing, tracker and win notice URLs in the bids. */
  readonly baseUrl: string;
  readonly nextBidId: () => string;
}

/** The size fault answers bid with on an imp without a usable banner, so that every imp gets a bid. */
const FALLBACK_SIZE: BannerSize = { w: 300, h: 250 };

export function isBidRequest(body: unknown): body is OpenRtbBidRequest {
  if (!isRecord(body) || typeof body.id !== 'string') return false;
  const { imp } = body;
  return Array.isArray(imp) && imp.length > 0 && imp.every((i) => isRecord(i) && typeof i.id === 'string');
}

/** The bids of a well-behaved DSP: banner imps only, honouring badv, bcat, private auctions and deals. */
export function chooseBids(request: OpenRtbBidRequest, context: BidContext): OpenRtbBid[] {
  const { settings } = context;
  const bids: OpenRtbBid[] = [];
  if (isBlocked(request, settings)) return bids;
  for (const imp of request.imp) {
    const size = bannerSize(imp);
    if (!size) continue;
    const pmp = isRecord(imp.pmp) ? imp.pmp : undefined;
    const deal = settings.deals && pmp ? eligibleDeal(pmp, settings.seat) : undefined;
    if (!deal && pmp?.private_auction === 1) continue;
    if (!chance(settings.bidRate, settings.random)) continue;
    const price = drawPrice(settings.priceCpm, settings.random);
    bids.push(
      deal
        ? makeBid(context, imp.id, size, Math.max(price, centsAtLeast(deal.floor)), deal.id)
        : makeBid(context, imp.id, size, price),
    );
  }
  return bids;
}

/** One open-market bid per imp, whatever the filters say: the well-formed base that faults corrupt. */
export function bidOnEveryImp(request: OpenRtbBidRequest, context: BidContext): OpenRtbBid[] {
  const { priceCpm, random } = context.settings;
  return request.imp.map((imp) =>
    makeBid(context, imp.id, bannerSize(imp) ?? FALLBACK_SIZE, drawPrice(priceCpm, random)),
  );
}

export function bidResponse(requestId: string, seat: string, bids: OpenRtbBid[]): OpenRtbBidResponse {
  return { id: requestId, seatbid: [{ seat, bid: bids }], cur: 'USD' };
}

/**
 * An anchor wrapping the creative, then an impression pixel: the "extended" structure of the
 * specification (2.12). Macros are left for the exchange, which substitutes them wherever found.
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
  size: BannerSize,
  price: number,
  dealid?: string,
): OpenRtbBid {
  const { seat, adomain, cat, nurl } = context.settings;
  const crid = `${seat}-${size.w}x${size.h}`;
  const bid: OpenRtbBid = {
    id: context.nextBidId(),
    impid,
    price,
    adid: crid,
    crid,
    cid: `${seat}-campaign`,
    adomain,
    adm: bannerMarkup(context.baseUrl, crid, size),
  };
  if (cat.length > 0) bid.cat = cat;
  if (dealid !== undefined) bid.dealid = dealid;
  if (nurl) {
    bid.nurl = `${context.baseUrl}/win?auction=\${AUCTION_ID}&imp=\${AUCTION_IMP_ID}&price=\${AUCTION_PRICE}`;
  }
  return bid;
}

function bannerSize(imp: OpenRtbImp): BannerSize | undefined {
  const { banner } = imp;
  if (!isRecord(banner)) return undefined;
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
  if (!Array.isArray(pmp.deals)) return undefined;
  for (const deal of pmp.deals as unknown[]) {
    if (!isRecord(deal) || typeof deal.id !== 'string') continue;
    const { wseat, bidfloor } = deal;
    if (Array.isArray(wseat) && wseat.length > 0 && !wseat.includes(seat)) continue;
    return {
      id: deal.id,
      floor: typeof bidfloor === 'number' && Number.isFinite(bidfloor) && bidfloor > 0 ? bidfloor : 0,
    };
  }
  return undefined;
}

function chance(probability: number, random: () => number): boolean {
  return probability >= 1 || (probability > 0 && random() < probability);
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
