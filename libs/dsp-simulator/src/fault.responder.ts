import type { ServerResponse } from 'node:http';
import type { OpenRtbBid, OpenRtbBidRequest, OpenRtbBidResponse } from './bid-response.builder';
import { isNativeFault, type DspFault, type NativeFault } from './dsp-simulator.settings';
import { OPENRTB_VERSION_HEADER, reply, replyJson, replyText } from './http.replies';

/** When a `late` answer comes: well past the exchange's implicit tmax of 150 ms. */
export const LATE_ANSWER_MS = 400;
export const DRIP_INTERVAL_MS = 50;
/** Where a `redirect` answer points; the simulator counts the requests that follow it. */
export const REDIRECT_PATH = '/openrtb2/redirected';
/** The advertiser of a `blocked_adomain` bid when the request blocks none. */
export const BLOCKED_ADOMAIN_FALLBACK = 'blocked-advertiser.example';
export const ABSURD_PRICE_CPM = 1_000_000;

const FILLER = Buffer.alloc(64 * 1024, 'x');
/** 80 x 64 KiB: a 5 MiB answer, beyond any sane cap on a bid response. */
const HUGE_BODY_FILLERS = 80;
const CLOSE_BID = Buffer.from('"}]}],"cur":"USD"}');

/**
 * Scripts the exchange must strip before looking for the anchor (bidding spec 2.12,
 * docs/specification-notes.md#bidding-part-2-12): the first writes a decoy anchor that a naive extraction
 * would pick up instead of the real one.
 */
const HOSTILE_SCRIPTS =
  `<script>document.write('<a href="https://malicious.example/"><img src="https://malicious.example/decoy.png"></a>')</script>` +
  `<script src="https://malicious.example/tag.js"></script>`;

const JSON_HEADERS = { ...OPENRTB_VERSION_HEADER, 'content-type': 'application/json' };

export interface FaultAnswer {
  readonly request: OpenRtbBidRequest;
  /**
   * A well-formed answer bidding on every imp, which most faults corrupt; under a native fault,
   * its native bids already carry the fault.
   */
  readonly response: OpenRtbBidResponse;
  /** How many answers with this fault came before, so that `wrong_types` cycles through its shapes. */
  readonly occurrence: number;
  /** Receives the drip timer, so that closing the simulator stops it. */
  readonly timers: Set<NodeJS.Timeout>;
}

type TransportFault =
  | 'invalid_json'
  | 'huge_body'
  | 'endless_body'
  | 'slow_drip'
  | 'redirect'
  | 'http_500'
  | 'late'
  | 'empty_200';
type BodyFault = Exclude<DspFault, TransportFault | NativeFault>;

export function writeFault(fault: DspFault, res: ServerResponse, answer: FaultAnswer): void {
  if (isNativeFault(fault)) {
    return replyJson(res, 200, JSON.stringify(answer.response));
  }
  switch (fault) {
    case 'invalid_json':
      return replyJson(res, 200, JSON.stringify(answer.response).slice(0, 40));
    case 'huge_body':
      return writeHuge(res, answer);
    case 'endless_body':
      return writeEndless(res, answer);
    case 'slow_drip':
      return drip(res, JSON.stringify(answer.response), answer.timers);
    case 'redirect':
      return reply(res, 302, { ...OPENRTB_VERSION_HEADER, location: REDIRECT_PATH });
    case 'http_500':
      return replyText(res, 500, 'simulated DSP failure');
    case 'late':
      // The delay is the fault; the answer itself is sound.
      return replyJson(res, 200, JSON.stringify(answer.response));
    case 'empty_200':
      return reply(res, 200, JSON_HEADERS);
    default:
      return replyJson(res, 200, JSON.stringify(corrupted(fault, answer)));
  }
}

function corrupted(fault: BodyFault, answer: FaultAnswer): object {
  const { request, response } = answer;
  switch (fault) {
    case 'wrong_request_id':
      return { ...response, id: `${request.id}-other` };
    case 'wrong_imp_id':
      return withBids(response, (bid) => ({ ...bid, impid: `${bid.impid}-unknown` }));
    case 'negative_price':
      return withBids(response, (bid) => ({ ...bid, price: -Math.max(bid.price, 0.01) }));
    case 'absurd_price':
      return withBids(response, (bid) => ({ ...bid, price: ABSURD_PRICE_CPM }));
    case 'price_as_string':
      return withBids(response, (bid) => ({ ...bid, price: bid.price.toFixed(2) }));
    case 'script_markup':
      return withBids(response, (bid) => ({ ...bid, adm: `${HOSTILE_SCRIPTS}${bid.adm ?? ''}` }));
    case 'no_markup':
      return withBids(response, ({ adm: _adm, ...bid }) => bid);
    case 'wrong_currency':
      return { ...response, cur: 'EUR' };
    case 'blocked_adomain': {
      const first: unknown = Array.isArray(request.badv) ? request.badv[0] : undefined;
      const adomain = [typeof first === 'string' ? first : BLOCKED_ADOMAIN_FALLBACK];
      return withBids(response, (bid) => ({ ...bid, adomain }));
    }
    case 'wrong_types':
      return wrongTypes(response, answer.occurrence);
  }
}

function withBids(response: OpenRtbBidResponse, change: (bid: OpenRtbBid, index: number) => object): object {
  const [seatbid] = response.seatbid;
  return { ...response, seatbid: [{ ...seatbid, bid: seatbid.bid.map(change) }] };
}

/** Cycles through three shapes, so that a run with this fault sends every one of them. */
function wrongTypes(response: OpenRtbBidResponse, occurrence: number): object {
  const [seatbid] = response.seatbid;
  switch (occurrence % 3) {
    case 0:
      return { ...response, seatbid };
    case 1:
      return { ...response, seatbid: [{ ...seatbid, bid: seatbid.bid[0] }] };
    default:
      return withBids(response, (bid, index) => ({
        ...bid,
        id: index + 1,
        price: String(bid.price),
        adomain: bid.adomain[0],
      }));
  }
}

/** The start of a sound answer whose markup never ends (endless) or ends after megabytes (huge). */
function openBid(answer: FaultAnswer): Buffer {
  const { request, response } = answer;
  return Buffer.from(
    `{"id":${JSON.stringify(request.id)},"seatbid":[{"seat":${JSON.stringify(response.seatbid[0].seat)},` +
      `"bid":[{"id":"filler","impid":${JSON.stringify(request.imp[0].id)},"price":1,"adm":"`,
  );
}

function writeHuge(res: ServerResponse, answer: FaultAnswer): void {
  const head = openBid(answer);
  res.writeHead(200, {
    ...JSON_HEADERS,
    'content-length': head.length + HUGE_BODY_FILLERS * FILLER.length + CLOSE_BID.length,
  });
  res.write(head);
  // The same buffer queued 80 times: the socket holds references, not 5 MiB of copies.
  for (let i = 0; i < HUGE_BODY_FILLERS; i += 1) {
    res.write(FILLER);
  }
  res.end(CLOSE_BID);
}

/** Streams until the client hangs up, at the pace the client reads. */
function writeEndless(res: ServerResponse, answer: FaultAnswer): void {
  res.writeHead(200, JSON_HEADERS);
  res.write(openBid(answer));
  const pump = (): void => {
    let flowing = true;
    while (flowing && !res.destroyed) {
      flowing = res.write(FILLER);
    }
  };
  res.on('drain', pump);
  pump();
}

/** A sound answer, one byte every 50 ms, after headers sent at once so that only a total deadline helps. */
function drip(res: ServerResponse, body: string, timers: Set<NodeJS.Timeout>): void {
  const bytes = Buffer.from(body);
  res.writeHead(200, { ...JSON_HEADERS, 'content-length': bytes.length });
  res.flushHeaders();
  let sent = 0;
  const timer = setInterval(() => {
    sent += 1;
    if (sent < bytes.length) {
      res.write(bytes.subarray(sent - 1, sent));
      return;
    }
    stop();
    res.end(bytes.subarray(sent - 1));
  }, DRIP_INTERVAL_MS);
  const stop = (): void => {
    clearInterval(timer);
    timers.delete(timer);
  };
  timers.add(timer);
  res.once('close', stop);
}
