import { DIMENSION_FIELDS, fnv1a32, type AdEvent, type DimensionField } from '@app/events';
import { emptyMeasures, type Measures } from '@app/report-model';

/** The catalog dimensions of the exact daily cube, in key order (docs/exactness.md#the-exact-tier). */
export const EXACT_KEY_FIELDS = [
  'publisher_id',
  'publisher_domain',
  'template_id',
  'ad_slot_id',
  'advertiser_id',
  'insertion_order_id',
  'campaign_id',
  'campaign_type',
  'demand_type',
  'strategy_id',
  'creative_id',
  'size',
] as const;

/**
 * Every dimension of an event, kept by the inexact tier so that any filter of reporting part 4.2
 * (docs/specification-notes.md#reporting-part-4-2) still applies there: the cube's keys first, then the
 * others in the event schema's order.
 */
export const INEXACT_FIELDS: readonly DimensionField[] = [
  ...EXACT_KEY_FIELDS,
  ...DIMENSION_FIELDS.filter((field) => !(EXACT_KEY_FIELDS as readonly string[]).includes(field)),
];

/** Events that move a reported measure; auctions, bids and wins feed other analyses. */
export function isReportable(event: AdEvent): boolean {
  return event.type === 'impression' || event.type === 'click' || event.type === 'conversion';
}

/** The measures one event contributes, before sampling weights. */
export function measuresOf(event: AdEvent, weight = 1): Measures {
  const m = emptyMeasures();
  switch (event.type) {
    case 'impression':
      if (event.reopen) {
        m.reopens = weight;
      } else {
        m.unique_impressions = weight;
      }
      break;
    case 'click':
      m.clicks = weight;
      break;
    case 'conversion':
      if (event.attribution === 'post_view') {
        m.post_view_conversions = weight;
      } else {
        m.conversions = weight;
      }
      break;
    default:
      return m;
  }
  m.spend_micros = event.spend_micros * weight;
  m.revenue_micros = event.revenue_micros * weight;
  return m;
}

/**
 * Deterministic 1-in-N sample of the inexact tier: impressions are the volume and are sampled by a
 * hash of their event id; clicks and conversions are rare and kept whole. Returns the weight of
 * the event in the sample, or 0 when it is left out.
 */
export function sampleWeight(event: AdEvent, denominator: number): number {
  return isSampled(event.type, denominator) ? sampleWeightOfHash(fnv1a32(event.event_id), denominator) : 1;
}

/** Whether events of this type are sampled (else their weight is 1). */
export function isSampled(type: AdEvent['type'], denominator: number): boolean {
  return type === 'impression' && denominator > 1;
}

/** The weight of a sampled event whose id hashes (`fnv1a32`) to `hash`. */
export function sampleWeightOfHash(hash: number, denominator: number): number {
  return hash % denominator === 0 ? denominator : 0;
}

export function utcDayOf(ts: string): string {
  return ts.slice(0, 10);
}

export function utcHourOf(ts: string): number {
  return Number(ts.slice(11, 13));
}

/**
 * The first day retention keeps (`YYYY-MM-DD`): the first of the month `months` before `now`'s.
 * Both stores drop what they keep of the days before it.
 */
export function retentionCutoff(now: Date, months: number): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1)).toISOString().slice(0, 10);
}
