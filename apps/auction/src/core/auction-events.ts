import { randomUUID } from 'node:crypto';
import {
  EVENT_SCHEMA_VERSION,
  type AdEvent,
  type BidStatus,
  type EventDimensions,
  type EventType,
} from '@app/events';
import { decisionDimensions, type AdDecision } from './ad-decision';
import type { SettledAuction } from './auction';
import type { ViewerDimensions, WinnerDimensions } from './event-dimensions';

/** An event ready for the bus: its type (which names its topic), its key and its JSON. */
export interface EncodedEvent {
  readonly type: EventType;
  /** The ad slot: one slot's events stay in order on one partition. */
  readonly key: string;
  readonly value: string;
}

/** The fields of an event beside its dimensions and money; undefined ones are left out. */
interface EventFields {
  readonly auction_id?: string;
  readonly user_id?: string;
  readonly dsp_id?: string;
  readonly bid_status?: BidStatus;
  readonly reason?: string;
  readonly price_micros?: number;
  readonly deal_id?: string;
  readonly reopen?: boolean;
  readonly attribution?: 'post_click' | 'post_view';
}

/** An object's fields as JSON without the braces ('' for none), to splice into an event's JSON. */
function jsonFields(value: object): string {
  const json = JSON.stringify(value);
  return json.length > 2 ? json.slice(1, -1) : '';
}

/**
 * Winner dimensions as JSON fields, once per object: the auction hands the same frozen lineage
 * object to every bid on the same creative (and `NO_WINNER` to every answer without one).
 */
const winnerJson = new WeakMap<WinnerDimensions, string>();

function winnerFields(winner: WinnerDimensions): string {
  let json = winnerJson.get(winner);
  if (json === undefined) {
    json = jsonFields(winner);
    if (Object.isFrozen(winner)) {
      winnerJson.set(winner, json);
    }
  }
  return json;
}

/** `,"name":value` of a field, or '' when it is undefined: a bid event's varying part. */
const field = (name: string, value: string | number | undefined): string =>
  value === undefined ? '' : `,"${name}":${typeof value === 'number' ? value : JSON.stringify(value)}`;

/**
 * One event's JSON from its parts, the dimensions already serialised: what `JSON.stringify` of
 * the `AdEvent` would be, up to the order of its fields.
 */
function encode(
  type: EventType,
  ts: string,
  key: string,
  dimensions: string,
  fields: EventFields,
  spendMicros = 0,
  revenueMicros = 0,
): EncodedEvent {
  const rest = jsonFields(fields);
  return {
    type,
    key,
    value:
      `{"v":${EVENT_SCHEMA_VERSION},"event_id":"${randomUUID()}","type":"${type}","ts":"${ts}",` +
      `"spend_micros":${spendMicros},"revenue_micros":${revenueMicros},${dimensions}` +
      `${rest === '' ? '' : ','}${rest}}`,
  };
}

/**
 * The events of one decision, with its dimensions serialised once for all of them: the auction,
 * a bid per DSP answer or bid, the win; then the impression and the click of the request that
 * shows it. Pure functions of the settled auction and the decision: nothing here is changed.
 */
export class DecisionEvents {
  private readonly key: string;
  private readonly context: string;
  private allDimensions?: string;

  constructor(private readonly decision: AdDecision) {
    this.key = decision.context.ad_slot_id;
    this.context = jsonFields(decision.context);
  }

  /** The auction, its bids and its win, all at the auction's time. */
  auction(settled: SettledAuction): EncodedEvent[] {
    const { decision } = this;
    const ts = settled.at.toISOString();
    const ids = { auction_id: decision.auctionId, user_id: decision.userId };
    const events = [
      encode('auction', ts, this.key, this.dimensions(), { ...ids, reason: settled.noFillReason }),
    ];
    // What every bid event of the auction shares, then each bid's own fields.
    const head = `"v":${EVENT_SCHEMA_VERSION},"type":"bid","ts":"${ts}","spend_micros":0,"revenue_micros":0,${this.context},`;
    const tail = jsonFields(ids);
    for (const bid of settled.bids) {
      events.push({
        type: 'bid',
        key: this.key,
        value:
          `{"event_id":"${randomUUID()}",${head}${winnerFields(bid.winner)},${tail}` +
          `${field('dsp_id', bid.dspId)}${field('bid_status', bid.status)}${field('reason', bid.reason)}` +
          `${field('price_micros', bid.priceMicros)}${field('deal_id', bid.dealId)}` +
          `${field('loss_code', bid.lossCode)}}`,
      });
    }
    if (decision.filled) {
      events.push(encode('win', ts, this.key, this.dimensions(), this.decisionFields()));
    }
    return events;
  }

  /**
   * A view of the decision's ad at `at` by `viewer` (the decision's own when the view is the
   * auction's request): spend and revenue on the first view only.
   */
  impression(at: Date, viewer: ViewerDimensions | undefined, first: boolean): EncodedEvent {
    const { decision } = this;
    return encode(
      'impression',
      at.toISOString(),
      this.key,
      this.dimensionsFor(viewer),
      { ...this.decisionFields(), reopen: !first },
      first ? decision.spendMicros : 0,
      first ? decision.revenueMicros : 0,
    );
  }

  click(at: Date, viewer: ViewerDimensions): EncodedEvent {
    return encode('click', at.toISOString(), this.key, this.dimensionsFor(viewer), this.decisionFields());
  }

  private decisionFields(): EventFields {
    const { decision } = this;
    return {
      auction_id: decision.auctionId,
      user_id: decision.userId,
      dsp_id: decision.dspId,
      deal_id: decision.dealId,
      price_micros: decision.dspId ? decision.clearingMicros : undefined,
    };
  }

  private dimensions(): string {
    this.allDimensions ??= `${this.context},${winnerFields(this.decision.winner)}`;
    return this.allDimensions;
  }

  private dimensionsFor(viewer: ViewerDimensions | undefined): string {
    return viewer
      ? jsonFields({ ...this.decision.context, ...viewer, ...this.decision.winner })
      : this.dimensions();
  }
}

/** An event built as an object: a conversion, rare enough not to need the encoded path. */
export function encodeAdEvent(event: AdEvent): EncodedEvent {
  return { type: event.type, key: event.ad_slot_id, value: JSON.stringify(event) };
}

/** The fields every event of the exchange has, for a type, a time and dimensions. */
export function baseEvent(type: EventType, at: Date, dimensions: EventDimensions): AdEvent {
  return {
    v: EVENT_SCHEMA_VERSION,
    event_id: randomUUID(),
    type,
    ts: at.toISOString(),
    spend_micros: 0,
    revenue_micros: 0,
    ...dimensions,
  };
}

/** An event that follows a decision: win, impression, click, conversion. */
export function decisionEvent(
  type: EventType,
  at: Date,
  decision: AdDecision,
  dimensions: EventDimensions = decisionDimensions(decision),
): AdEvent {
  return {
    ...baseEvent(type, at, dimensions),
    auction_id: decision.auctionId,
    user_id: decision.userId,
    dsp_id: decision.dspId,
    deal_id: decision.dealId,
    price_micros: decision.dspId ? decision.clearingMicros : undefined,
  };
}
