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
  chooseBids,
  isBidRequest,
  type BidContext,
} from './bid-response.builder';
import {
  parseCreativePath,
  renderCreativeSvg,
  renderLandingPage,
  TRANSPARENT_GIF,
} from './creative.renderer';
import {
  applyBehaviour,
  DEFAULT_SETTINGS,
  drawUniform,
  DSP_FAULTS,
  pickFault,
  type DspBehaviour,
  type DspFault,
  type DspSettings,
  type DspSimulatorOptions,
} from './dsp-simulator.settings';
import { LATE_ANSWER_MS, REDIRECT_PATH, writeFault } from './fault.responder';
import { OPENRTB_VERSION_HEADER, reply, replyJson, replyNoContent, replyText } from './http.replies';
import { RingBuffer } from './ring.buffer';

export const BID_PATH = '/openrtb2/bid';
/** Larger bid requests are refused with 413, unread. */
export const MAX_BID_REQUEST_BYTES = 1024 * 1024;
/** How many bid requests, win notices and tracker hits each are kept for inspection. */
export const RECORDED_LIMIT = 1000;

const CREATIVE_PREFIX = '/creative/';
const PIXEL_HEADERS = { 'content-type': 'image/gif', 'cache-control': 'no-store' };
const CREATIVE_HEADERS = { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' };
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

export interface DspSimulatorStats {
  /** Requests to the bid endpoint, whatever their fate. */
  requests: number;
  /** Normal answers carrying at least one bid. */
  bids: number;
  /** Normal answers without a bid (204). */
  noBids: number;
  /** Bid requests refused as malformed (400) or too large (413). */
  rejected: number;
  /** Answers replaced by each fault. */
  faults: Record<DspFault, number>;
  wins: number;
  impressions: number;
  clicks: number;
  /** Requests that followed a `redirect` answer; an exchange should send none. */
  redirectsFollowed: number;
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
  private counters = zeroStats();
  /** Bid ids stay unique across simulators and restarts sharing one exchange. */
  private readonly bidIdPrefix = randomBytes(4).toString('hex');
  private bidSequence = 0;
  private readonly nextBidId = (): string => {
    this.bidSequence += 1;
    return `${this.bidIdPrefix}-${this.bidSequence.toString(36)}`;
  };
  private closing: Promise<void> | undefined;

  /** `METHOD /path` to handler; the native and user sync endpoints are to join here. */
  private readonly routes = new Map<string, RouteHandler>([
    [`POST ${BID_PATH}`, (req, res) => this.receiveBidRequest(req, res)],
    ['GET /win', (req, res, query) => this.recordWin(req, res, query)],
    ['GET /imp', (_req, res, query) => this.recordHit('imp', res, query)],
    ['GET /click', (_req, res, query) => this.recordHit('click', res, query)],
    ['GET /landing', (_req, res, query) => this.serveLanding(res, query)],
    [`GET ${REDIRECT_PATH}`, (_req, res) => this.countRedirect(res)],
    [`POST ${REDIRECT_PATH}`, (_req, res) => this.countRedirect(res)],
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

  stats(): DspSimulatorStats {
    return { ...this.counters, faults: { ...this.counters.faults } };
  }

  /** Changes the behaviour of the answers to come; throws a RangeError, changing nothing, when invalid. */
  configure(patch: DspBehaviour): void {
    this.settings = applyBehaviour(this.settings, patch);
  }

  /** Forgets the recorded requests, win notices and tracker hits, and zeroes the counters. */
  reset(): void {
    this.receivedRequests.clear();
    this.receivedWins.clear();
    this.receivedHits.clear();
    this.counters = zeroStats();
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve, reject) => {
      for (const timer of this.timers) clearTimeout(timer);
      this.timers.clear();
      this.server.close((error) => (error ? reject(error) : resolve()));
      // Endless and dripping answers never end by themselves: their sockets are cut.
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
    if (route) route(req, res, mark === -1 ? '' : target.slice(mark + 1));
    else if (req.method === 'GET' && path.startsWith(CREATIVE_PREFIX)) this.serveCreative(res, path);
    else replyText(res, 404, 'not found');
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
      if (refused) return;
      size += chunk.length;
      if (size <= MAX_BID_REQUEST_BYTES) chunks.push(chunk);
      else {
        refused = true;
        this.refuseTooLarge(res);
      }
    });
    req.on('end', () => {
      if (!refused) this.answerBidRequest(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
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
    const fault = pickFault(settings);
    if (fault !== undefined) {
      const occurrence = this.counters.faults[fault];
      this.counters.faults[fault] = occurrence + 1;
      // Built now rather than when the delay ends, so that seeded draws keep their order.
      const response = bidResponse(body.id, settings.seat, bidOnEveryImp(body, context));
      const answer = { request: body, response, occurrence, timers: this.timers };
      const delay = fault === 'late' ? LATE_ANSWER_MS : drawUniform(settings.latencyMs, settings.random);
      this.later(delay, () => writeFault(fault, res, answer));
      return;
    }
    const bids = chooseBids(body, context);
    const delay = drawUniform(settings.latencyMs, settings.random);
    if (bids.length === 0) {
      this.counters.noBids += 1;
      this.later(delay, () => replyNoContent(res, OPENRTB_VERSION_HEADER));
      return;
    }
    this.counters.bids += 1;
    const payload = JSON.stringify(bidResponse(body.id, settings.seat, bids));
    this.later(delay, () => replyJson(res, 200, payload));
  }

  private bidContext(): BidContext {
    return { settings: this.settings, baseUrl: this.publicUrl ?? this.address, nextBidId: this.nextBidId };
  }

  private later(delayMs: number, answer: () => void): void {
    if (delayMs <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
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

  private recordHit(kind: TrackerHit['kind'], res: ServerResponse, query: string): void {
    if (kind === 'imp') this.counters.impressions += 1;
    else this.counters.clicks += 1;
    this.receivedHits.push({ kind, query: parseQuery(query) });
    reply(res, 200, PIXEL_HEADERS, TRANSPARENT_GIF);
  }

  private serveCreative(res: ServerResponse, path: string): void {
    const size = parseCreativePath(path);
    if (!size) {
      replyText(res, 404, 'no such creative');
      return;
    }
    const { seat, adomain } = this.settings;
    reply(res, 200, CREATIVE_HEADERS, renderCreativeSvg(size, seat, adomain[0] ?? seat));
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
    wins: 0,
    impressions: 0,
    clicks: 0,
    redirectsFollowed: 0,
  };
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
