import type {
  AccountRecord,
  AdSlotRecord,
  AdvertiserRecord,
  CampaignRecord,
  CatalogDocument,
  CreativeRecord,
  DspRecord,
  InsertionOrderRecord,
  PublisherRecord,
  StrategyRecord,
  TemplateRecord,
  UserRecord,
} from './catalog.schema';

/**
 * Names and ids of the entities above a split value, for the attribute columns of reporting part 2.4
 * (docs/specification-notes.md#reporting-part-2-4).
 */
export type EntityAttributes = Partial<Record<string, string>>;

const byId = <T extends { id: string }>(items: readonly T[]): ReadonlyMap<string, T> =>
  new Map(items.map((item) => [item.id, item]));

/**
 * The validated catalog with its indexes. Immutable once built: a new catalog file means a new
 * instance.
 */
export class Catalog {
  readonly accounts: ReadonlyMap<string, AccountRecord>;
  readonly users: ReadonlyMap<string, UserRecord>;
  readonly publishers: ReadonlyMap<string, PublisherRecord>;
  readonly templates: ReadonlyMap<string, TemplateRecord>;
  readonly adSlots: ReadonlyMap<string, AdSlotRecord>;
  readonly advertisers: ReadonlyMap<string, AdvertiserRecord>;
  readonly insertionOrders: ReadonlyMap<string, InsertionOrderRecord>;
  readonly campaigns: ReadonlyMap<string, CampaignRecord>;
  readonly strategies: ReadonlyMap<string, StrategyRecord>;
  readonly creatives: ReadonlyMap<string, CreativeRecord>;
  readonly dsps: ReadonlyMap<string, DspRecord>;
  /**
   * DSPs by the advertiser id of their sync callback (bidding part 4.4,
   * docs/specification-notes.md#bidding-part-4-4).
   */
  readonly dspsBySyncId: ReadonlyMap<string, DspRecord>;
  private readonly publishersByDomain: ReadonlyMap<string, PublisherRecord>;

  constructor(readonly document: CatalogDocument) {
    this.accounts = byId(document.accounts);
    this.users = byId(document.users);
    this.publishers = byId(document.publishers);
    this.templates = byId(document.templates);
    this.adSlots = byId(document.adSlots);
    this.advertisers = byId(document.advertisers);
    this.insertionOrders = byId(document.insertionOrders);
    this.campaigns = byId(document.campaigns);
    this.strategies = byId(document.strategies);
    this.creatives = byId(document.creatives);
    this.dsps = byId(document.dsps);
    this.publishersByDomain = new Map(document.publishers.map((p) => [p.domain, p]));
    this.dspsBySyncId = new Map(document.dsps.map((d) => [d.dspAdvertiserId ?? d.id, d]));
  }

  publisherIdsOf(accountId: string): string[] {
    return this.document.publishers.filter((p) => p.accountId === accountId).map((p) => p.id);
  }

  advertiserIdsOf(accountId: string): string[] {
    return this.document.advertisers.filter((a) => a.accountId === accountId).map((a) => a.id);
  }

  /** The chain above an ad slot: template, publisher. */
  slotLineage(adSlotId: string) {
    const slot = this.adSlots.get(adSlotId);
    const template = slot && this.templates.get(slot.templateId);
    const publisher = template && this.publishers.get(template.publisherId);
    return { slot, template, publisher };
  }

  /** The chain above a creative: strategy, campaign, insertion order, advertiser. */
  creativeLineage(creativeId: string) {
    const creative = this.creatives.get(creativeId);
    return { creative, ...this.strategyLineage(creative?.strategyId) };
  }

  strategyLineage(strategyId: string | undefined) {
    const strategy = strategyId === undefined ? undefined : this.strategies.get(strategyId);
    const campaign = strategy && this.campaigns.get(strategy.campaignId);
    const insertionOrder = campaign && this.insertionOrders.get(campaign.insertionOrderId);
    const advertiser = insertionOrder && this.advertisers.get(insertionOrder.advertiserId);
    return { strategy, campaign, insertionOrder, advertiser };
  }

  /**
   * The attribute values that a row of the given split carries: the split entity and everything
   * above it in the catalog. Unknown values give no attributes.
   */
  attributesFor(split: string, value: string): EntityAttributes {
    switch (split) {
      case 'publisher_id':
        return publisherAttributes(this.publishers.get(value));
      case 'publisher_domain':
        return publisherAttributes(this.publishersByDomain.get(value));
      case 'template_id': {
        const template = this.templates.get(value);
        return {
          ...publisherAttributes(template && this.publishers.get(template.publisherId)),
          ...templateAttributes(template),
        };
      }
      case 'ad_slot_id': {
        const { slot, template, publisher } = this.slotLineage(value);
        return {
          ...publisherAttributes(publisher),
          ...templateAttributes(template),
          ad_slot_name: slot?.name,
        };
      }
      case 'advertiser_id':
        return advertiserAttributes(this.advertisers.get(value));
      case 'insertion_order_id': {
        const io = this.insertionOrders.get(value);
        return {
          ...advertiserAttributes(io && this.advertisers.get(io.advertiserId)),
          ...insertionOrderAttributes(io),
        };
      }
      case 'campaign_id': {
        const campaign = this.campaigns.get(value);
        const io = campaign && this.insertionOrders.get(campaign.insertionOrderId);
        return {
          ...advertiserAttributes(io && this.advertisers.get(io.advertiserId)),
          ...insertionOrderAttributes(io),
          ...campaignAttributes(campaign),
        };
      }
      case 'strategy_id': {
        const { strategy, campaign, insertionOrder, advertiser } = this.strategyLineage(value);
        return {
          ...advertiserAttributes(advertiser),
          ...insertionOrderAttributes(insertionOrder),
          ...campaignAttributes(campaign),
          strategy_name: strategy?.name,
        };
      }
      case 'creative_id':
        return { creative_name: this.creatives.get(value)?.name };
      default:
        return {};
    }
  }
}

function publisherAttributes(p: PublisherRecord | undefined): EntityAttributes {
  return p ? { publisher_id: p.id, publisher_name: p.name, publisher_domain: p.domain } : {};
}

function templateAttributes(t: TemplateRecord | undefined): EntityAttributes {
  return t ? { template_id: t.id, template_name: t.name } : {};
}

function advertiserAttributes(a: AdvertiserRecord | undefined): EntityAttributes {
  return a ? { advertiser_id: a.id, advertiser_name: a.name, advertiser_domain: a.domain } : {};
}

function insertionOrderAttributes(io: InsertionOrderRecord | undefined): EntityAttributes {
  return io ? { insertion_order_id: io.id, insertion_order_name: io.name } : {};
}

function campaignAttributes(c: CampaignRecord | undefined): EntityAttributes {
  return c
    ? { campaign_id: c.id, campaign_name: c.name, campaign_type: c.campaignType, demand_type: c.demandType }
    : {};
}
