import { randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  bidOnEveryImp,
  bidResponse,
  carriesNativeFault,
  chooseBids,
  isBidRequest,
  readImps,
  type BidContext,
  type ImpOffer,
  type OpenRtbBidRequest,
} from './bid-response.builder';
import {
  isCreativeSide,
  parseCreativePath,
  parseNativeImagePath,
  renderCreativeSvg,
  renderLandingPage,
  TRANSPARENT_GIF,
} from './creative.renderer';
import {
  applyBehaviour,
  chance,
  DEFAULT_SETTINGS,
  drawUniform,
  DSP_FAULTS,
  isNativeFault,
  pickFault,
  SYNC_FAULTS,
  type DspBehaviour,
  type DspFault,
  type DspSettings,
  type DspSimulatorOptions,
  type SyncFault,
} from './dsp-simulator.settings';
import { LATE_ANSWER_MS, REDIRECT_PATH, writeFault } from './fault.responder';
import { OPENRTB_VERSION_HEADER, reply, replyJson, replyNoContent, replyText } from './http.replies';
import type { NativeKind } from './native-response.builder';
import { HANG_PATH } from './native.faults';
import { PngCache, renderCreativePng, renderNativeImagePng, writeHugePng } from './png.renderer';
import { RingBuffer } from './ring.buffer';
import {
  callbackLocation,
  cameOverHttps,
  DSP_UID_COOKIE,
  faultyBidderUuid,
  foreignLocation,
  readCookie,
  readSyncQuery,
  SYNC_PATH,
  UidIssuer,
  uidCookie,
} from './user-sync';

export const BID_PATH = '/openrtb2/bid';
/** Larger bid requests are refused with 413, unread. */
export const MAX_BID_REQUEST_BYTES = 1024 * 1024;
/** How many bid requests, win notices, tracker hits and syncs each are kept for inspection. */
export const RECORDED_LIMIT = 1000;

const CREATIVE_PREFIX = '/creative/';
const NATIVE_IMAGE_PREFIX = '/native-image/';
const PIXEL_HEADERS = { 'content-type': 'image/gif', 'cache-control': 'no-store' };
const CREATIVE_HEADERS = { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' };
const PNG_HEADERS = { 'content-type': 'image/png', 'cache-control': 'public, max-age=86400' };
const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8' };

export interface ReceivedBidRequest {
  /** Parsed JSON, recorded before validation so that a refused request can be inspected too. */
  readonly body: unknown;
  readonly headers: IncomingHttpHeaders;
  readonly at: number;
}

export interface ReceivedWin {
  /** The request target: path and query. */
  readonly url: string;
  readonly query: Record<string, string>;
}

export interface TrackerHit {
  readonly kind: 'imp' | 'click';
  readonly query: Record<string, string>;
}

/** A billing (`/bill`) or loss (`/loss`) notice the exchange called, its macros substituted. */
export interface ReceivedNotice {
  readonly kind: 'bill' | 'loss';
  readonly query: Record<string, string>;
  readonly headers: IncomingHttpHeaders;
}

/**
 * A request to the user sync endpoint (bidding spec 4.3, docs/specification-notes.md#bidding-part-4-3),
 * answered or refused.
 */
export interface ReceivedSync {
  readonly exchangeUuid: string;
  readonly bidderId: string;
  /** The user id in the `dsp_uid` cookie answered; empty when the request was refused. */
  readonly dspUid: string;
  /** As received, even when refused for not being an http(s) URL. */
  readonly callbackUrl: string;
  /** 302, 200 under the `no_redirect` fault, or 400 when refused. */
  readonly status: number;
  /** Whether the callback got the user id as bidder_uuid: matched, and no fault in the way. */
  readonly matched: boolean;
  readonly fault?: SyncFault;
}

export interface DspSimulatorStats {
  /** Requests to the bid endpoint, whatever their fate. */
  requests: number;
  /** Normal answers carrying at least one bid. */
  bids: number;
  /** Normal answers without a bid (204). */
  noBids: number;
  /** Native bids in normal answers. */
  nativeBids: number;
  /** Bid requests left without a bid under `matchedOnlyBids`, their user not one of the simulator's. */
  unmatched: number;
  /** Bid requests refused as malformed (400) or too large (413). */
  rejected: number;
  /** Answers replaced by each fault. */
  faults: Record<DspFault, number>;
  wins: number;
  impressions: number;
  clicks: number;
  /** Requests that followed a `redirect` answer; an exchange should send none. */
  redirectsFollowed: number;
  /** PNG creatives and native images served. */
  images: number;
  /** Native images asked beyond the largest side rendered, answered with a 20 MiB body. */
  hugeImages: number;
  /** Requests to the endpoint that never answers. */
  hangs: number;
  /** Sync requests answered, with a redirect or with a sync fault's answer. */
  syncs: number;
  /** Sync redirects that gave the callback the user id. */
  syncsMatched: number;
  /** Sync requests refused (400): a parameter missing, or a callback that is not an http(s) URL. */
  syncsRefused: number;
  /** Sync answers replaced by each sync fault. */
  syncFaults: Record<SyncFault, number>;
  /**
   * Bid answers written later than their drawn latency by more than 10, 40 and 80 ms: the
   * simulator's own event loop running late (a benchmark's simulators share the machine), which
   * an exchange sees as a slow DSP.
   */
  overdueAnswers: { over10ms: number; over40ms: number; over80ms: number };
}

type RouteHandler = (req: IncomingMessage, res: ServerResponse, query: string) => void;

/**
 * A configurable OpenRTB 2.5 DSP on plain `node:http`, for tests, the demo and benchmarks. It
 * answers thousands of bid requests a second on one core: no logging, no synchronous work, and
 * recording bounded to the last {@link RECORDED_LIMIT} items of each kind.
 */
export class DspSimulator {
  private settings: DspSettings;
  private readonly publicUrl: string | undefined;
  private readonly server: Server;
  private address = '';
  /** Pending delayed answers and drips, cleared on close so that none outlives the simulator. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly receivedRequests = new RingBuffer<ReceivedBidRequest>(RECORDED_LIMIT);
  private readonly receivedWins = new RingBuffer<ReceivedWin>(RECORDED_LIMIT);
  private readonly receivedHits = new RingBuffer<TrackerHit>(RECORDED_LIMIT);
  private readonly receivedSyncs = new RingBuffer<ReceivedSync>(RECORDED_LIMIT);
  private readonly receivedNotices = new RingBuffer<ReceivedNotice>(RECORDED_LIMIT);
  private counters = zeroStats();
  private readonly uids = new UidIssuer();
  private readonly creativePngs = new PngCache();
  private readonly nativeImages = new PngCache();
  /** Bid ids stay unique across simulators and restarts sharing one exchange. */
  private readonly bidIdPrefix = randomBytes(4).toString('hex');
  private bidSequence = 0;
  private readonly nextBidId = (): string => {
    this.bidSequence += 1;
    return `${this.bidIdPrefix}-${this.bidSequence.toString(36)}`;
  };
  /** Native bids made since the last reset; under `native: 'mixed'` the odd ones are real, the even static. */
  private nativeSequence = 0;
  private readonly nextNativeKind = (): NativeKind => {
    this.nativeSequence += 1;
    const { native } = this.settings;
    if (native !== 'mixed') {
      return native;
    }
    return this.nativeSequence % 2 === 1 ? 'real' : 'static';
  };
  private closing: Promise<void> | undefined;

  /** `METHOD /path` to handler; `GET /creative/*` and `GET /native-image/*` go by prefix. */
  private readonly routes = new Map<string, RouteHandler>([
    [`POST ${BID_PATH}`, (req, res) => this.receiveBidRequest(req, res)],
    ['GET /win', (req, res, query) => this.recordWin(req, res, query)],
    ['GET /imp', (_req, res, query) => this.recordHit('imp', res, query)],
    ['GET /click', (_req, res, query) => this.recordHit('click', res, query)],
    ['GET /bill', (req, res, query) => this.recordNotice('bill', req, res, query)],
    ['GET /loss', (req, res, query) => this.recordNotice('loss', req, res, query)],
    ['GET /landing', (_req, res, query) => this.serveLanding(res, query)],
    [`GET ${REDIRECT_PATH}`, (_req, res) => this.countRedirect(res)],
    [`POST ${REDIRECT_PATH}`, (_req, res) => this.countRedirect(res)],
    [`GET ${SYNC_PATH}`, (req, res, query) => this.answerSync(req, res, query)],
    [`GET ${HANG_PATH}`, () => this.hang()],
  ]);

  private constructor(options: DspSimulatorOptions) {
    this.settings = applyBehaviour(DEFAULT_SETTINGS, options);
    this.publicUrl = options.publicUrl === undefined ? undefined : baseUrlOf(options.publicUrl);
    this.server = createServer((req, res) => this.dispatch(req, res));
  }

  static async start(options: DspSimulatorOptions = {}): Promise<DspSimulator> {
    const simulator = new DspSimulator(options);
    await simulator.listen(options.host ?? '127.0.0.1', options.port ?? 0);
    return simulator;
  }

  /** The address the simulator listens on, e.g. `http://127.0.0.1:9101`. */
  get url(): string {
    return this.address;
  }

  get bidUrl(): string {
    return `${this.address}${BID_PATH}`;
  }

  /**
   * The user sync endpoint the exchange's sync pixel points browsers at
   * (docs/specification-notes.md#bidding-part-4-3).
   */
  get syncUrl(): string {
    return `${this.address}${SYNC_PATH}`;
  }

  /** Bid requests whose body parsed as JSON, oldest first. */
  get requests(): readonly ReceivedBidRequest[] {
    return this.receivedRequests.toArray();
  }

  get wins(): readonly ReceivedWin[] {
    return this.receivedWins.toArray();
  }

  get trackerHits(): readonly TrackerHit[] {
    return this.receivedHits.toArray();
  }

  get syncs(): readonly ReceivedSync[] {
    return this.receivedSyncs.toArray();
  }

  /** Billing and loss notices received, oldest first. */
  get notices(): readonly ReceivedNotice[] {
    return this.receivedNotices.toArray();
  }

  /** Whether this simulator issued the user id, as `matchedOnlyBids` asks of `user.buyeruid`. */
  issuedUid(uid: unknown): boolean {
    return this.uids.issued(uid);
  }

  stats(): DspSimulatorStats {
    const { faults, syncFaults, overdueAnswers } = this.counters;
    return {
      ...this.counters,
      faults: { ...faults },
      syncFaults: { ...syncFaults },
      overdueAnswers: { ...overdueAnswers },
    };
  }

  /** Changes the behaviour of the answers to come; throws a RangeError, changing nothing, when invalid. */
  configure(patch: DspBehaviour): void {
    this.settings = applyBehaviour(this.settings, patch);
  }

  /**
   * Forgets the recorded requests, win notices, tracker hits and syncs, zeroes the counters and
   * restarts the alternation of `native: 'mixed'`. The user ids issued stay valid.
   */
  reset(): void {
    this.receivedRequests.clear();
    this.receivedWins.clear();
    this.receivedHits.clear();
    this.receivedSyncs.clear();
    this.receivedNotices.clear();
    this.counters = zeroStats();
    this.nativeSequence = 0;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve, reject) => {
      for (const timer of this.timers) {
        clearTimeout(timer);
      }
      this.timers.clear();
      this.server.close((error) => (error ? reject(error) : resolve()));
      // Endless, dripping and hanging answers never end by themselves: their sockets are cut.
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  private listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        this.address = urlOf(this.server.address() as AddressInfo);
        resolve();
      });
    });
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const target = req.url ?? '/';
    const mark = target.indexOf('?');
    const path = mark === -1 ? target : target.slice(0, mark);
    const route = this.routes.get(`${req.method ?? ''} ${path}`);
    if (route) {
      route(req, res, mark === -1 ? '' : target.slice(mark + 1));
    } else if (req.method === 'GET' && path.startsWith(CREATIVE_PREFIX)) {
      this.serveCreative(res, path);
    } else if (req.method === 'GET' && path.startsWith(NATIVE_IMAGE_PREFIX)) {
      this.serveNativeImage(res, path);
    } else {
      replyText(res, 404, 'not found');
    }
  }

  private receiveBidRequest(req: IncomingMessage, res: ServerResponse): void {
    this.counters.requests += 1;
    if (Number(req.headers['content-length']) > MAX_BID_REQUEST_BYTES) {
      this.refuseTooLarge(res);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) {
        return;
      }
      size += chunk.length;
      if (size <= MAX_BID_REQUEST_BYTES) {
        chunks.push(chunk);
      } else {
        refused = true;
        this.refuseTooLarge(res);
      }
    });
    req.on('end', () => {
      if (!refused) {
        this.answerBidRequest(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      }
    });
  }

  private answerBidRequest(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      this.refuse(res, 'malformed JSON');
      return;
    }
    this.receivedRequests.push({ body, headers: req.headers, at: Date.now() });
    if (!isBidRequest(body)) {
      this.refuse(res, 'not a bid request: needs a string id and at least one imp, each with a string id');
      return;
    }
    const context = this.bidContext();
    const { settings } = context;
    const offers = readImps(body);
    const fault = applicable(pickFault(settings), offers);
    if (fault !== undefined) {
      const occurrence = this.counters.faults[fault];
      this.counters.faults[fault] = occurrence + 1;
      // Built now rather than when the delay ends, so that seeded draws keep their order.
      const nativeFault = isNativeFault(fault) ? { fault, occurrence } : undefined;
      const response = bidResponse(body.id, settings.seat, bidOnEveryImp(offers, context, nativeFault));
      const answer = { request: body, response, occurrence, timers: this.timers };
      const delay = fault === 'late' ? LATE_ANSWER_MS : drawUniform(settings.latencyMs, settings.random);
      this.later(delay, () => writeFault(fault, res, answer));
      return;
    }
    const matched = !settings.matchedOnlyBids || this.isMatchedUser(body);
    if (!matched) {
      this.counters.unmatched += 1;
    }
    // Each native bid takes the next native kind: the sequence counts them.
    const nativeBefore = this.nativeSequence;
    const bids = matched ? chooseBids(offers, body, context) : [];
    this.counters.nativeBids += this.nativeSequence - nativeBefore;
    const delay = drawUniform(settings.latencyMs, settings.random);
    if (bids.length === 0) {
      this.counters.noBids += 1;
      this.later(delay, () => replyNoContent(res, OPENRTB_VERSION_HEADER));
      return;
    }
    this.counters.bids += 1;
    const bidid = settings.notices ? `r-${this.nextBidId()}` : undefined;
    const payload = JSON.stringify(bidResponse(body.id, settings.seat, bids, bidid));
    this.later(delay, () => replyJson(res, 200, payload));
  }

  private bidContext(): BidContext {
    return {
      settings: this.settings,
      baseUrl: this.publicUrl ?? this.address,
      nextBidId: this.nextBidId,
      nextNativeKind: this.nextNativeKind,
    };
  }

  private isMatchedUser(request: OpenRtbBidRequest): boolean {
    const { user } = request;
    return (
      typeof user === 'object' && user !== null && this.uids.issued((user as { buyeruid?: unknown }).buyeruid)
    );
  }

  private later(delayMs: number, answer: () => void): void {
    if (delayMs <= 0) {
      answer();
      return;
    }
    const due = performance.now() + delayMs;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const overdue = performance.now() - due;
      const counts = this.counters.overdueAnswers;
      counts.over10ms += overdue > 10 ? 1 : 0;
      counts.over40ms += overdue > 40 ? 1 : 0;
      counts.over80ms += overdue > 80 ? 1 : 0;
      answer();
    }, delayMs);
    this.timers.add(timer);
  }

  private refuse(res: ServerResponse, reason: string): void {
    this.counters.rejected += 1;
    replyText(res, 400, reason);
  }

  /** The rest of the body stays unread, so the connection cannot carry another request. */
  private refuseTooLarge(res: ServerResponse): void {
    this.counters.rejected += 1;
    reply(
      res,
      413,
      { 'content-type': 'text/plain; charset=utf-8', connection: 'close' },
      `bid request larger than ${MAX_BID_REQUEST_BYTES} bytes`,
    );
  }

  private recordWin(req: IncomingMessage, res: ServerResponse, query: string): void {
    this.counters.wins += 1;
    this.receivedWins.push({ url: req.url ?? '', query: parseQuery(query) });
    replyNoContent(res);
  }

  private recordNotice(
    kind: ReceivedNotice['kind'],
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
  ): void {
    this.receivedNotices.push({ kind, query: parseQuery(query), headers: req.headers });
    replyNoContent(res);
  }

  private recordHit(kind: TrackerHit['kind'], res: ServerResponse, query: string): void {
    if (kind === 'imp') {
      this.counters.impressions += 1;
    } else {
      this.counters.clicks += 1;
    }
    this.receivedHits.push({ kind, query: parseQuery(query) });
    reply(res, 200, PIXEL_HEADERS, TRANSPARENT_GIF);
  }

  private serveCreative(res: ServerResponse, path: string): void {
    const creative = parseCreativePath(path);
    if (!creative) {
      replyText(res, 404, 'no such creative');
      return;
    }
    const { size } = creative;
    const { seat, adomain } = this.settings;
    const advertiser = adomain[0] ?? seat;
    if (creative.format === 'svg') {
      reply(res, 200, CREATIVE_HEADERS, renderCreativeSvg(size, seat, advertiser));
      return;
    }
    const key = `${size.w}x${size.h} ${seat} ${advertiser}`;
    this.servePng(
      res,
      this.creativePngs.get(key, () => renderCreativePng(size, seat, advertiser)),
    );
  }

  /** Up to the largest creative side, a rendered placeholder; beyond, a PNG header and 20 MiB. */
  private serveNativeImage(res: ServerResponse, path: string): void {
    const size = parseNativeImagePath(path);
    if (!size) {
      replyText(res, 404, 'no such image');
      return;
    }
    if (!isCreativeSide(size.w) || !isCreativeSide(size.h)) {
      this.counters.hugeImages += 1;
      writeHugePng(res, size);
      return;
    }
    const { seat } = this.settings;
    this.servePng(
      res,
      this.nativeImages.get(`${size.w}x${size.h} ${seat}`, () => renderNativeImagePng(size, seat)),
    );
  }

  private servePng(res: ServerResponse, rendering: Promise<Buffer>): void {
    rendering.then(
      (png) => {
        if (res.destroyed) {
          return;
        }
        this.counters.images += 1;
        reply(res, 200, PNG_HEADERS, png);
      },
      () => {
        if (!res.destroyed) {
          replyText(res, 500, 'image rendering failed');
        }
      },
    );
  }

  /**
   * The user sync endpoint (bidding spec 4.3, docs/specification-notes.md#bidding-part-4-3): sets the
   * browser's `dsp_uid` cookie, kept when it holds an id this simulator issued, and redirects to the
   * exchange's callback with the user id (bidding spec 4.4, docs/specification-notes.md#bidding-part-4-4).
   */
  private answerSync(req: IncomingMessage, res: ServerResponse, query: string): void {
    const sync = readSyncQuery(query);
    const { exchangeUuid, bidderId, callbackUrl } = sync;
    if (!sync.ok) {
      this.counters.syncsRefused += 1;
      this.receivedSyncs.push({
        exchangeUuid,
        bidderId,
        dspUid: '',
        callbackUrl,
        status: 400,
        matched: false,
      });
      replyText(res, 400, sync.reason);
      return;
    }
    const { settings } = this;
    const known = readCookie(req.headers.cookie, DSP_UID_COOKIE);
    const dspUid = this.uids.issued(known) ? known : this.uids.issue();
    const wantsMatch = chance(settings.syncMatchRate, settings.random);
    const fault = settings.syncFault;
    const headers = { 'set-cookie': uidCookie(dspUid, cameOverHttps(req)), 'cache-control': 'no-store' };
    let status = 302;
    if (fault === 'no_redirect') {
      status = 200;
      reply(res, 200, { ...PIXEL_HEADERS, ...headers }, TRANSPARENT_GIF);
    } else if (fault === 'open_redirect') {
      reply(res, 302, { ...headers, location: foreignLocation(dspUid, sync.callback) });
    } else {
      const bidderUuid = faultyBidderUuid(fault, dspUid) ?? (wantsMatch ? dspUid : '');
      const { syncExpirationSeconds } = settings;
      const expiration =
        syncExpirationSeconds > 0 ? Math.floor(Date.now() / 1000) + syncExpirationSeconds : undefined;
      reply(res, 302, {
        ...headers,
        location: callbackLocation(sync.callback, bidderId, bidderUuid, expiration),
      });
    }
    const matched = fault === undefined && wantsMatch;
    this.counters.syncs += 1;
    if (matched) {
      this.counters.syncsMatched += 1;
    }
    if (fault !== undefined) {
      this.counters.syncFaults[fault] += 1;
    }
    this.receivedSyncs.push({
      exchangeUuid,
      bidderId,
      dspUid,
      callbackUrl,
      status,
      matched,
      ...(fault === undefined ? {} : { fault }),
    });
  }

  /** No answer: the request stays open until the client hangs up or close() cuts it. */
  private hang(): void {
    this.counters.hangs += 1;
  }

  private serveLanding(res: ServerResponse, query: string): void {
    const { seat, adomain } = this.settings;
    reply(res, 200, HTML_HEADERS, renderLandingPage(parseQuery(query).crid ?? '', adomain[0] ?? seat));
  }

  private countRedirect(res: ServerResponse): void {
    this.counters.redirectsFollowed += 1;
    replyNoContent(res, OPENRTB_VERSION_HEADER);
  }
}

function zeroStats(): DspSimulatorStats {
  return {
    requests: 0,
    bids: 0,
    noBids: 0,
    rejected: 0,
    faults: Object.fromEntries(DSP_FAULTS.map((fault) => [fault, 0])) as Record<DspFault, number>,
    nativeBids: 0,
    unmatched: 0,
    wins: 0,
    impressions: 0,
    clicks: 0,
    redirectsFollowed: 0,
    images: 0,
    hugeImages: 0,
    hangs: 0,
    syncs: 0,
    syncsMatched: 0,
    syncsRefused: 0,
    syncFaults: Object.fromEntries(SYNC_FAULTS.map((fault) => [fault, 0])) as Record<SyncFault, number>,
    overdueAnswers: { over10ms: 0, over40ms: 0, over80ms: 0 },
  };
}

/** The fault drawn, unless it is a native one and no native imp of the request can carry it. */
function applicable(fault: DspFault | undefined, offers: readonly ImpOffer[]): DspFault | undefined {
  if (fault === undefined || !isNativeFault(fault)) {
    return fault;
  }
  return carriesNativeFault(offers, fault) ? fault : undefined;
}

function parseQuery(query: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(query));
}

function urlOf(address: AddressInfo): string {
  // A wildcard address is reachable on loopback, the only address sure to exist.
  const host =
    address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Origin and path without a trailing slash, percent-encoded so that it is safe inside markup attributes. */
function baseUrlOf(publicUrl: string): string {
  const parsed = URL.canParse(publicUrl) ? new URL(publicUrl) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new RangeError(`publicUrl must be an http(s) URL, got ${publicUrl}`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}
