import type { Catalog } from '@app/catalog';
import type { EventDimensions } from '@app/events';
import type { AdContext, Viewer } from './ad-context';
import type { Candidate } from './candidate';

/** Dimension values are bounded like the event schema's (256 characters). */
const clip = (value: string): string => (value.length > 256 ? value.slice(0, 256) : value);

/**
 * The viewer's part of reporting part 2.2's dimensions (docs/specification-notes.md#reporting-part-2-2): geo
 * and device.
 */
export type ViewerDimensions = Pick<
  EventDimensions,
  'country' | 'region' | 'metro' | 'zip' | 'device_maker' | 'device_model' | 'device_type' | 'os' | 'browser'
>;

/** The winner's part: the candidate's lineage in the catalog. */
export type WinnerDimensions = Pick<
  EventDimensions,
  | 'advertiser_id'
  | 'advertiser_domain'
  | 'insertion_order_id'
  | 'campaign_id'
  | 'campaign_type'
  | 'demand_type'
  | 'strategy_id'
  | 'creative_id'
>;

/** The rest, the same for every event of an auction: the slot with its lineage, the tag, the viewer. */
export type ContextDimensions = Omit<EventDimensions, keyof WinnerDimensions>;

/** No winner: every winner dimension empty, never absent, as the event schema wants. */
export const NO_WINNER: WinnerDimensions = Object.freeze({
  advertiser_id: '',
  advertiser_domain: '',
  insertion_order_id: '',
  campaign_id: '',
  campaign_type: '',
  demand_type: '',
  strategy_id: '',
  creative_id: '',
});

/**
 * The dimensions of reporting part 2.2 (docs/specification-notes.md#reporting-part-2-2) an auction's events
 * share: the slot and its lineage, the tag, the viewer.
 */
export function contextDimensionsOf(ctx: AdContext): ContextDimensions {
  const [segmentKey, segmentValue] = ctx.tag.keyValues[0] ?? ['', ''];
  return {
    publisher_id: ctx.publisher.id,
    publisher_domain: ctx.publisher.domain,
    template_id: ctx.template.id,
    ad_slot_id: ctx.slot.id,
    size: ctx.slot.size,
    placement_id: clip(ctx.tag.placementId),
    list_id: clip(ctx.tag.listId),
    segment_key: clip(segmentKey),
    segment_value: clip(segmentValue),
    age: ctx.tag.age,
    gender: ctx.tag.gender,
    email_domain: clip(ctx.tag.emailDomain),
    ...viewerDimensions(ctx.viewer),
  };
}

export function viewerDimensions(viewer: Viewer): ViewerDimensions {
  return {
    country: viewer.geo.country,
    region: clip(viewer.geo.region),
    metro: viewer.geo.metro,
    zip: clip(viewer.geo.zip),
    device_maker: clip(viewer.device.device_maker),
    device_model: clip(viewer.device.device_model),
    device_type: viewer.device.device_type,
    os: clip(viewer.device.os),
    browser: clip(viewer.device.browser),
  };
}

export function winnerDimensions(catalog: Catalog, winner: Candidate): WinnerDimensions {
  const { strategy, campaign, insertionOrder, advertiser } = catalog.strategyLineage(winner.strategyId);
  return {
    advertiser_id: advertiser?.id ?? '',
    advertiser_domain: winner.advertiserDomain,
    insertion_order_id: insertionOrder?.id ?? '',
    campaign_id: campaign?.id ?? '',
    campaign_type: campaign?.campaignType ?? '',
    demand_type: winner.demandType,
    strategy_id: strategy?.id ?? '',
    creative_id: clip(winner.creativeId),
  };
}
