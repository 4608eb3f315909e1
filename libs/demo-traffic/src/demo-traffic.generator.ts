import type { Catalog, AdSlotRecord, CreativeRecord } from '@app/catalog';
import { EVENT_SCHEMA_VERSION, type AdEvent, type EventDimensions } from '@app/events';
import { AGES, DEVICES, EMAIL_DOMAINS, GENDERS, HOURS, PLACES, SEGMENTS } from './audience.data';
import { Random, Weighted } from './random';

export interface DemoTrafficOptions {
  /** Number of UTC days before `today` to fill. */
  readonly days: number;
  /** Events of all kinds per day, approximately. */
  readonly eventsPerDay: number;
  readonly now: Date;
  readonly seed: number;
}

/** Rates that shape the demo data; real newsletters sit around these figures. */
const REOPEN_RATE = 0.35;
const CLICK_RATE = 0.025;
const POST_CLICK_CONVERSION_RATE = 0.08;
const POST_VIEW_CONVERSION_RATE = 0.003;

interface SlotPlan {
  readonly slot: AdSlotRecord;
  readonly creatives: Weighted<CreativeRecord>;
}

function dayString(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Produces realistic delivery events for the catalog: opens spread over the day, reopens, clicks, post-click
 * and post-view conversions, every dimension of reporting part 2.2 filled
 * (docs/specification-notes.md#reporting-part-2-2). Deterministic for a seed.
 */
export function* generateDemoTraffic(catalog: Catalog, options: DemoTrafficOptions): Generator<AdEvent> {
  const random = new Random(options.seed);
  const creatives = catalog.document.creatives;
  const plans: SlotPlan[] = catalog.document.adSlots.map((slot) => {
    const fitting = creatives.filter((c) => c.size === slot.size);
    const pool = fitting.length > 0 ? fitting : creatives;
    return { slot, creatives: new Weighted(pool.map((c, i) => [c, 1 + ((i * 7) % 5)] as const)) };
  });
  const slots = new Weighted(plans.map((p, i) => [p, 1 + ((i * 3) % 4)] as const));
  const todayMs = Date.parse(`${options.now.toISOString().slice(0, 10)}T00:00:00Z`);
  let counter = 0;
  const nextId = () => `${options.seed.toString(36)}-${(counter++).toString(36)}`;

  for (let back = options.days; back >= 1; back -= 1) {
    const dayMs = todayMs - back * 86_400_000;
    const day = dayString(dayMs);
    let emitted = 0;
    while (emitted < options.eventsPerDay) {
      const plan = slots.pick(random);
      const creative = plan.creatives.pick(random);
      const dims = dimensionsFor(catalog, plan.slot, creative, day, random);
      if (!dims) {
        continue;
      }
      const { dimensions, spendMicros, revenueMicros } = dims;
      const openMs = dayMs + HOURS.pick(random) * 3_600_000 + random.int(3_600_000);
      const at = (ms: number) => new Date(Math.min(ms, dayMs + 86_399_999)).toISOString();
      const base = { v: EVENT_SCHEMA_VERSION, ...dimensions } as const;

      yield {
        ...base,
        event_id: nextId(),
        type: 'impression',
        ts: at(openMs),
        reopen: false,
        spend_micros: spendMicros,
        revenue_micros: revenueMicros,
      };
      emitted += 1;
      if (random.chance(REOPEN_RATE)) {
        const reopens = 1 + random.int(3);
        for (let r = 0; r < reopens; r += 1) {
          yield {
            ...base,
            event_id: nextId(),
            type: 'impression',
            ts: at(openMs + (r + 1) * random.int(7_200_000)),
            reopen: true,
            spend_micros: 0,
            revenue_micros: 0,
          };
          emitted += 1;
        }
      }
      if (random.chance(CLICK_RATE)) {
        const clickMs = openMs + random.int(600_000);
        yield {
          ...base,
          event_id: nextId(),
          type: 'click',
          ts: at(clickMs),
          spend_micros: 0,
          revenue_micros: 0,
        };
        emitted += 1;
        if (random.chance(POST_CLICK_CONVERSION_RATE)) {
          yield {
            ...base,
            event_id: nextId(),
            type: 'conversion',
            ts: at(clickMs + random.int(1_800_000)),
            attribution: 'post_click',
            spend_micros: 0,
            revenue_micros: 0,
          };
          emitted += 1;
        }
      } else if (random.chance(POST_VIEW_CONVERSION_RATE)) {
        yield {
          ...base,
          event_id: nextId(),
          type: 'conversion',
          ts: at(openMs + random.int(3_600_000)),
          attribution: 'post_view',
          spend_micros: 0,
          revenue_micros: 0,
        };
        emitted += 1;
      }
    }
  }
}

function dimensionsFor(
  catalog: Catalog,
  slot: AdSlotRecord,
  creative: CreativeRecord,
  day: string,
  random: Random,
): { dimensions: EventDimensions; spendMicros: number; revenueMicros: number } | undefined {
  const { template, publisher } = catalog.slotLineage(slot.id);
  const { strategy, campaign, insertionOrder, advertiser } = catalog.creativeLineage(creative.id);
  if (!template || !publisher || !strategy || !campaign || !insertionOrder || !advertiser) {
    return undefined;
  }
  const place = PLACES.pick(random);
  const device = DEVICES.pick(random);
  const [segmentKey, segmentValue] = SEGMENTS.pick(random);
  const spendMicros = Math.round(strategy.cpmMicros / 1000);
  const dimensions: EventDimensions = {
    publisher_id: publisher.id,
    publisher_domain: publisher.domain,
    template_id: template.id,
    ad_slot_id: slot.id,
    advertiser_id: advertiser.id,
    advertiser_domain: advertiser.domain,
    insertion_order_id: insertionOrder.id,
    campaign_id: campaign.id,
    campaign_type: campaign.campaignType,
    demand_type: campaign.demandType,
    strategy_id: strategy.id,
    creative_id: creative.id,
    size: slot.size,
    placement_id: `plc-${publisher.id}-${day.replace(/-/g, '')}-${1 + random.int(2)}`,
    list_id: `list-${publisher.id}-${1 + random.int(3)}`,
    segment_key: segmentKey,
    segment_value: segmentValue,
    age: AGES.pick(random),
    gender: GENDERS.pick(random),
    country: place.country,
    region: place.region,
    metro: place.metro,
    zip: random.pick(place.zips),
    device_maker: device.maker,
    device_model: device.model,
    device_type: device.type,
    os: device.os,
    browser: random.pick(device.browsers),
    email_domain: EMAIL_DOMAINS.pick(random),
  };
  return { dimensions, spendMicros, revenueMicros: Math.round(spendMicros * (1 - publisher.exchangeShare)) };
}
