import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { GeoResolver } from '@app/audience';
import { deliveryCountersFor, type DeliveryCounters } from '@app/booking';
import type { CatalogSource } from '@app/catalog';
import { EVENT_BUS, type EventBus } from '@app/events';
import { ObservabilityModule } from '@app/observability';
import { STATE_STORE, type StateStore } from '@app/state-store';
import { DspUrlGuard } from '@app/url-guard';
import { AdTagHandler } from './ad-tag.handler';
import type { AuctionConfig } from './auction.config';
import { AuctionExceptionFilter } from './auction-exception.filter';
import { AuctionService } from './auction.service';
import {
  AUCTION_CONFIG,
  CATALOG,
  CLOCK,
  DELIVERY_COUNTERS_TOKEN,
  DSP_URL_GUARD,
  GEO_RESOLVER,
  type Clock,
} from './auction.tokens';
import { DemoController } from './demo/demo.controller';
import { PublicOrigin } from './public-origin.service';
import { AdServingService } from './serving/ad-serving.service';
import { ConversionService } from './serving/conversion.service';
import { DecisionStore } from './serving/decision.store';
import { DeliveryMetricsService } from './serving/delivery-metrics.service';
import { EventPublisher } from './serving/event.publisher';
import { LoadShedder } from './serving/load-shedder';
import { NativeCreativeService } from './serving/native-creative.service';
import { NativeImageController } from './serving/native-image.controller';
import { ViewerResolver } from './serving/viewer.resolver';
import { SellersJsonController } from './supply/sellers-json.controller';
import { UserSyncController } from './sync/user-sync.controller';
import { UserSyncService } from './sync/user-sync.service';
import { UserSyncStore } from './sync/user-sync.store';
import { TrackerDispatcher } from './tracking/tracker.dispatcher';

/** What the composition root hands the auction app: its config and the adapters of its ports. */
export interface AuctionDependencies {
  readonly config: AuctionConfig;
  /** The catalog serving now; it reloads without a restart (docs/direct-campaigns.md#reload). */
  readonly catalog: CatalogSource;
  /** Booked deliveries' counters; by default Redis when REDIS_URL is set, else this process's memory. */
  readonly deliveryCounters?: DeliveryCounters;
  readonly bus: EventBus;
  readonly stateStore: StateStore;
  readonly geo: GeoResolver;
  readonly clock?: Clock;
}

/** The ad tag and what it leads to: thousands of requests a second, counted by the metrics. */
export const AD_TAG_PATHS = /^\/(img|click|conv|sync|s|native|creatives)\//;

@Module({})
export class AuctionModule {
  static forRoot(deps: AuctionDependencies): DynamicModule {
    return {
      module: AuctionModule,
      imports: [ObservabilityModule.forRoot({ stateStore: () => deps.stateStore.ping() })],
      controllers: [UserSyncController, NativeImageController, DemoController, SellersJsonController],
      providers: [
        { provide: AUCTION_CONFIG, useValue: deps.config },
        { provide: CATALOG, useValue: deps.catalog },
        {
          provide: DELIVERY_COUNTERS_TOKEN,
          useValue: deps.deliveryCounters ?? deliveryCountersFor(deps.config),
        },
        { provide: EVENT_BUS, useValue: deps.bus },
        { provide: STATE_STORE, useValue: deps.stateStore },
        { provide: GEO_RESOLVER, useValue: deps.geo },
        { provide: CLOCK, useValue: deps.clock ?? (() => new Date()) },
        { provide: DSP_URL_GUARD, useValue: new DspUrlGuard(deps.config.DSP_URL_ALLOW_PRIVATE === 1) },
        { provide: APP_FILTER, useClass: AuctionExceptionFilter },
        AdTagHandler,
        AuctionService,
        PublicOrigin,
        AdServingService,
        ConversionService,
        DecisionStore,
        DeliveryMetricsService,
        EventPublisher,
        LoadShedder,
        NativeCreativeService,
        TrackerDispatcher,
        UserSyncService,
        UserSyncStore,
        ViewerResolver,
      ],
      exports: [EventPublisher, TrackerDispatcher],
    };
  }
}
