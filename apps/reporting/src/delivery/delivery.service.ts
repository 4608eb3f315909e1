import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { BookingDesk, type DeliveryCounters, type LayerDelivery } from '@app/booking';
import type { AccountRecord, BookingRecord, Catalog, CatalogSource } from '@app/catalog';
import { AuthenticationService } from '../auth/authentication.service';
import { RateLimiterService } from '../auth/rate-limiter.service';
import { CATALOG, DELIVERY_COUNTERS } from '../reporting.tokens';

/** One booked goal's layer as the delivery answer shows it: the layer with its names. */
export interface BookingDeliveryView extends LayerDelivery {
  readonly name: string;
  readonly campaignId: string;
  readonly campaignName: string;
  readonly campaignType: string;
  readonly advertiserId: string;
  readonly advertiserName: string;
}

/** `POST /api/delivery`'s answer. */
export interface DeliveryAnswer {
  readonly now: string;
  /** The catalog the bookings are read from (`adx_catalog_info`'s version). */
  readonly catalogVersion: string;
  readonly bookings: readonly BookingDeliveryView[];
}

/**
 * Delivery against goal and pace of the bookings an account may see, for the report builder's
 * Delivery view: a media group sees its advertisers' campaigns; a publisher sees the ones booked
 * on its inventory alone (every publisher, template or slot it targets, or the template it takes
 * over, its own), never another publisher's. Authenticated and rate limited like `POST /api`.
 */
@Injectable()
export class DeliveryService implements OnApplicationShutdown {
  private desk?: { catalog: Catalog; desk: BookingDesk };

  constructor(
    private readonly authentication: AuthenticationService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(DELIVERY_COUNTERS) private readonly counters: DeliveryCounters,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.counters.close();
  }

  async run(body: Record<string, unknown>, now: Date): Promise<DeliveryAnswer> {
    const auth = await this.authentication.authenticate(body, now);
    await this.rateLimiter.consume(auth.user.id, now);
    const catalog = this.catalogs.current;
    const version = this.catalogs.version;
    if (this.desk?.catalog !== catalog) {
      this.desk = { catalog, desk: new BookingDesk(catalog, this.counters) };
    }
    const layers = await this.desk.desk.delivery(now.getTime());
    const bookings: BookingDeliveryView[] = [];
    for (const layer of layers) {
      const view = viewOf(catalog, layer);
      if (view && visibleTo(catalog, auth.account, layer)) {
        bookings.push(view);
      }
    }
    return { now: now.toISOString(), catalogVersion: version, bookings };
  }
}

function lineageOf(catalog: Catalog, layer: LayerDelivery) {
  if (layer.scope === 'strategy') {
    return catalog.strategyLineage(layer.id);
  }
  const campaign = catalog.campaigns.get(layer.id);
  const insertionOrder = campaign && catalog.insertionOrders.get(campaign.insertionOrderId);
  const advertiser = insertionOrder && catalog.advertisers.get(insertionOrder.advertiserId);
  return { strategy: undefined, campaign, insertionOrder, advertiser };
}

function viewOf(catalog: Catalog, layer: LayerDelivery): BookingDeliveryView | undefined {
  const { strategy, campaign, advertiser } = lineageOf(catalog, layer);
  if (!campaign || !advertiser) {
    return undefined;
  }
  return {
    ...layer,
    name: strategy?.name ?? campaign.name,
    campaignId: campaign.id,
    campaignName: campaign.name,
    campaignType: campaign.campaignType,
    advertiserId: advertiser.id,
    advertiserName: advertiser.name,
  };
}

/**
 * The publishers a booking runs on, when it names them: its targeted publishers, else those of its
 * targeted templates or slots, else its taken-over template's.
 */
function bookedPublishers(catalog: Catalog, booking: BookingRecord | undefined): string[] | undefined {
  const targeting = booking?.targeting;
  const publishers = targeting?.publishers?.include;
  if (publishers && publishers.length > 0) {
    return [...publishers];
  }
  const templates = [
    ...(targeting?.templates?.include ?? []),
    ...(targeting?.adSlots?.include ?? []).map((id) => catalog.adSlots.get(id)?.templateId ?? ''),
    ...(booking?.takeoverTemplateId ? [booking.takeoverTemplateId] : []),
  ];
  if (templates.length === 0) {
    return undefined;
  }
  return templates.map((id) => catalog.templates.get(id)?.publisherId ?? '');
}

export function visibleTo(catalog: Catalog, account: AccountRecord, layer: LayerDelivery): boolean {
  const { strategy, campaign, advertiser } = lineageOf(catalog, layer);
  if (!campaign || !advertiser) {
    return false;
  }
  if (account.kind === 'media_group') {
    return advertiser.accountId === account.id;
  }
  // A strategy flies inside its campaign: the campaign's publishers bound it when it names none.
  const publishers =
    (strategy && bookedPublishers(catalog, strategy.booking)) ?? bookedPublishers(catalog, campaign.booking);
  const own = new Set(catalog.publisherIdsOf(account.id));
  return publishers !== undefined && publishers.every((id) => own.has(id));
}
