import { type Catalog, loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { EVENT_SCHEMA_VERSION, emptyDimensions, type AdEvent } from '@app/events';
import { emptyMeasures, type Measures } from '@app/report-model';

let counter = 0;

/** One valid event with every dimension filled, overridable field by field. */
export function makeEvent(overrides: Partial<AdEvent> = {}): AdEvent {
  counter += 1;
  return {
    ...emptyDimensions(),
    v: EVENT_SCHEMA_VERSION,
    event_id: `fixture-${process.pid}-${counter}`,
    type: 'impression',
    ts: '2026-11-01T10:00:00.000Z',
    spend_micros: 0,
    revenue_micros: 0,
    publisher_id: 'pub-1',
    publisher_domain: 'morningledger.com',
    template_id: 'tpl-1-1',
    ad_slot_id: 'slot-1-1-1',
    advertiser_id: 'adv-1',
    advertiser_domain: 'acmeoutdoor.com',
    insertion_order_id: 'io-1-1',
    campaign_id: 'cmp-1-1-1',
    campaign_type: 'newsletter',
    demand_type: 'direct',
    strategy_id: 'str-1-1-1-1',
    creative_id: 'cr-1-1-1-1-1',
    size: '600x200',
    country: 'US',
    ...overrides,
  };
}

export const FIXED_NOW = new Date('2026-11-22T10:30:00.000Z');

/** A deterministic slice of demo traffic over the days before FIXED_NOW. */
export function demoEvents(days: number, eventsPerDay: number, catalog: Catalog = loadCatalog()): AdEvent[] {
  return [...generateDemoTraffic(catalog, { days, eventsPerDay, now: FIXED_NOW, seed: 7 })];
}

/** The value an event has for a split, computed without the store's code. */
export function splitValueOf(event: AdEvent, split: string): string | number {
  switch (split) {
    case 'day':
      return event.ts.slice(0, 10);
    case 'year':
      return Number(event.ts.slice(0, 4));
    case 'month':
      return Number(event.ts.slice(5, 7));
    case 'year_month':
      return `${event.ts.slice(0, 4)} ${event.ts.slice(5, 7)}`;
    case 'hour':
      return Number(event.ts.slice(11, 13));
    case 'day_hour':
      return `${event.ts.slice(0, 10)} ${event.ts.slice(11, 13)}`;
    case 'segmented_keys':
      return event.segment_key;
    case 'segmented_values':
      return event.segment_value;
    default:
      return (event as unknown as Record<string, string>)[split];
  }
}

/** Sums per split value, straight from the events. */
export function expectedBySplit(events: readonly AdEvent[], split: string): Map<string | number, Measures> {
  const out = new Map<string | number, Measures>();
  for (const e of events) {
    const key = splitValueOf(e, split);
    const c = out.get(key) ?? emptyMeasures();
    if (e.type === 'impression' && e.reopen) {
      c.reopens += 1;
    }
    if (e.type === 'impression' && !e.reopen) {
      c.unique_impressions += 1;
    }
    if (e.type === 'click') {
      c.clicks += 1;
    }
    if (e.type === 'conversion' && e.attribution === 'post_view') {
      c.post_view_conversions += 1;
    }
    if (e.type === 'conversion' && e.attribution !== 'post_view') {
      c.conversions += 1;
    }
    if (e.type === 'impression' || e.type === 'click' || e.type === 'conversion') {
      c.spend_micros += e.spend_micros;
      c.revenue_micros += e.revenue_micros;
    }
    out.set(key, c);
  }
  return out;
}
