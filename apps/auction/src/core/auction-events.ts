import { randomUUID } from 'node:crypto';
import {
  EVENT_SCHEMA_VERSION,
  type AdEvent,
  type BidStatus,
  type EventDimensions,
  type EventType,
} from '@app/events';
import type { AdDecision } from './ad-decision';

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

export interface BidEventInput {
  readonly dspId: string;
  readonly status: BidStatus;
  readonly reason?: string;
  readonly priceMicros?: number;
  readonly dealId?: string;
}

export function bidEvent(
  auctionId: string,
  userId: string,
  at: Date,
  dimensions: EventDimensions,
  bid: BidEventInput,
): AdEvent {
  return {
    ...baseEvent('bid', at, dimensions),
    auction_id: auctionId,
    user_id: userId,
    dsp_id: bid.dspId,
    bid_status: bid.status,
    reason: bid.reason,
    price_micros: bid.priceMicros,
    deal_id: bid.dealId,
  };
}

/** An event that follows a decision: win, impression, click, conversion. */
export function decisionEvent(
  type: EventType,
  at: Date,
  decision: AdDecision,
  dimensions?: EventDimensions,
): AdEvent {
  return {
    ...baseEvent(type, at, dimensions ?? decision.dimensions),
    auction_id: decision.auctionId,
    user_id: decision.userId,
    dsp_id: decision.dspId,
    deal_id: decision.dealId,
    price_micros: decision.dspId ? decision.clearingMicros : undefined,
  };
}
