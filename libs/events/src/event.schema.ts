import Ajv, { type ValidateFunction } from 'ajv';

/**
 * Version 2 added the auction fields (`auction_id`, `bid_status`, `reason`, `deal_id`,
 * `user_id`); version 1 events, which have none of them, are still read.
 */
export const EVENT_SCHEMA_VERSION = 2;
export const READABLE_SCHEMA_VERSIONS = [1, 2] as const;
export type EventSchemaVersion = (typeof READABLE_SCHEMA_VERSIONS)[number];

export const EVENT_TYPES = ['auction', 'bid', 'win', 'impression', 'click', 'conversion'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One Kafka topic per event type (docs/architecture.md#events). */
export const TOPIC_BY_TYPE: Readonly<Record<EventType, string>> = {
  auction: 'adx.auction',
  bid: 'adx.bid',
  win: 'adx.win',
  impression: 'adx.impression',
  click: 'adx.click',
  conversion: 'adx.conversion',
};
export const EVENT_TOPICS: readonly string[] = Object.values(TOPIC_BY_TYPE);
export const DEAD_LETTER_TOPIC = 'adx.dead-letter';

/**
 * Every dimension of reporting part 2.2 (docs/specification-notes.md#reporting-part-2-2) known when an event
 * happens, denormalised at emission. Unknown values are empty strings, never absent, so that every store sees
 * one shape.
 */
export const DIMENSION_FIELDS = [
  'publisher_id',
  'publisher_domain',
  'template_id',
  'ad_slot_id',
  'advertiser_id',
  'advertiser_domain',
  'insertion_order_id',
  'campaign_id',
  'campaign_type',
  'demand_type',
  'strategy_id',
  'creative_id',
  'size',
  'placement_id',
  'list_id',
  'segment_key',
  'segment_value',
  'age',
  'gender',
  'country',
  'region',
  'metro',
  'zip',
  'device_maker',
  'device_model',
  'device_type',
  'os',
  'browser',
  'email_domain',
] as const;
export type DimensionField = (typeof DIMENSION_FIELDS)[number];
export type EventDimensions = Record<DimensionField, string>;

/** What became of one DSP's answer in an auction (`bid` events). */
export const BID_STATUSES = ['won', 'lost', 'rejected', 'no_bid', 'timeout', 'error'] as const;
export type BidStatus = (typeof BID_STATUSES)[number];

export interface AdEvent extends EventDimensions {
  v: EventSchemaVersion;
  event_id: string;
  type: EventType;
  /** UTC timestamp, ISO 8601 with `Z`. */
  ts: string;
  /** Gross money charged to the advertiser by this event, micro-USD. */
  spend_micros: number;
  /** Net money earned by the publisher from this event, micro-USD. */
  revenue_micros: number;
  /** Impressions only: a later view of an email already opened (reopen, share or forward). */
  reopen?: boolean;
  /** Conversions only. */
  attribution?: 'post_click' | 'post_view';
  /** Bids and wins: the DSP and the price per thousand, micro-USD. */
  dsp_id?: string;
  price_micros?: number;
  /** v2: the auction an event belongs to, from the bid request to the conversion. */
  auction_id?: string;
  /** v2, bids: what became of the DSP's answer. */
  bid_status?: BidStatus;
  /** v2: why a bid was rejected or not made, why an auction went unfilled (enumerated codes). */
  reason?: string;
  /**
   * v2, bids: the bid's loss reason code, as its loss notice carries it (OpenRTB 2.5 list 5.25,
   * the exchange's own from 1000): 0 for the winner; absent for an answer without a bid.
   */
  loss_code?: number;
  /** v2: the deal a bid or win was made on. */
  deal_id?: string;
  /** v2: our user id (`user.id` of the bid request); never the publisher's recipient hash. */
  user_id?: string;
}

const dimensionProperties = Object.fromEntries(
  DIMENSION_FIELDS.map((f) => [f, { type: 'string', maxLength: 256 }]),
) as Record<DimensionField, { type: 'string'; maxLength: number }>;

const money = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER };

export const AD_EVENT_JSON_SCHEMA = {
  $id: 'https://schemas.email-adx.dev/ad-event.json',
  type: 'object',
  additionalProperties: false,
  required: ['v', 'event_id', 'type', 'ts', 'spend_micros', 'revenue_micros', ...DIMENSION_FIELDS],
  properties: {
    v: { enum: READABLE_SCHEMA_VERSIONS },
    event_id: { type: 'string', minLength: 1, maxLength: 64 },
    type: { enum: EVENT_TYPES },
    ts: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?Z$' },
    spend_micros: money,
    revenue_micros: money,
    reopen: { type: 'boolean' },
    attribution: { enum: ['post_click', 'post_view'] },
    dsp_id: { type: 'string', maxLength: 64 },
    price_micros: money,
    auction_id: { type: 'string', maxLength: 64 },
    bid_status: { enum: BID_STATUSES },
    reason: { type: 'string', maxLength: 64 },
    loss_code: { type: 'integer', minimum: 0, maximum: 65535 },
    deal_id: { type: 'string', maxLength: 64 },
    user_id: { type: 'string', maxLength: 64 },
    ...dimensionProperties,
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });
const validateAdEvent: ValidateFunction = ajv.compile(AD_EVENT_JSON_SCHEMA);

export type ParsedEvent = { ok: true; event: AdEvent } | { ok: false; reason: string };

/** Parses and validates one message value; the reason names the first problem found. */
export function parseAdEvent(value: string): ParsedEvent {
  let plain: unknown;
  try {
    plain = JSON.parse(value);
  } catch (error) {
    return { ok: false, reason: `malformed JSON: ${(error as Error).message}` };
  }
  if (!validateAdEvent(plain)) {
    const first = validateAdEvent.errors?.[0];
    return {
      ok: false,
      reason: `invalid event: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim(),
    };
  }
  const event = plain as AdEvent;
  if (Number.isNaN(Date.parse(event.ts))) {
    return { ok: false, reason: 'invalid event: /ts is not a date' };
  }
  return { ok: true, event };
}

const EMPTY_DIMENSIONS: Readonly<EventDimensions> = Object.freeze(
  Object.fromEntries(DIMENSION_FIELDS.map((f) => [f, ''])) as EventDimensions,
);

/** Every dimension, empty: a fresh object each time, copied from one built at load (a hot path). */
export function emptyDimensions(): EventDimensions {
  return { ...EMPTY_DIMENSIONS };
}
