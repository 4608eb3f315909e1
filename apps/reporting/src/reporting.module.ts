import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { deliveryCountersFor, type DeliveryCounters } from '@app/booking';
import type { CatalogSource } from '@app/catalog';
import { ObservabilityModule } from '@app/observability';
import { REPORT_STORE, type ReportStore } from '@app/report-store';
import { STATE_STORE, type StateStore } from '@app/state-store';
import { AuthenticationService } from './auth/authentication.service';
import { ReportBuilderModule } from './builder';
import { OpenApiModule } from './openapi';
import { RateLimiterService } from './auth/rate-limiter.service';
import { ReportRendererService } from './render/report-renderer.service';
import { ReportService } from './report/report.service';
import { ReportApiController } from './report-api.controller';
import { ReportingExceptionFilter } from './reporting-exception.filter';
import { DeliveryController } from './delivery/delivery.controller';
import { DeliveryService } from './delivery/delivery.service';
import { CATALOG, CLOCK, DELIVERY_COUNTERS, REPORTING_CONFIG, type Clock } from './reporting.tokens';
import type { ReportingConfig } from './reporting.config';
import { RequestDecoderService } from './request/request-decoder.service';

/** What the composition root hands the reporting app: its config and the adapters of its ports. */
export interface ReportingDependencies {
  readonly config: ReportingConfig;
  /** The catalog serving now; it reloads without a restart (docs/direct-campaigns.md#reload). */
  readonly catalog: CatalogSource;
  /** The auction's delivery counters (shared in one process; else Redis when REDIS_URL is set). */
  readonly deliveryCounters?: DeliveryCounters;
  readonly reportStore: ReportStore;
  readonly stateStore: StateStore;
  readonly clock?: Clock;
}

@Module({})
export class ReportingModule {
  static forRoot(deps: ReportingDependencies): DynamicModule {
    return {
      module: ReportingModule,
      imports: [
        ObservabilityModule.forRoot({
          reportStore: () => deps.reportStore.ping(),
          stateStore: () => deps.stateStore.ping(),
        }),
        ReportBuilderModule.forRoot(deps),
        OpenApiModule.forRoot(deps),
      ],
      controllers: [ReportApiController, DeliveryController],
      providers: [
        { provide: REPORTING_CONFIG, useValue: deps.config },
        { provide: CATALOG, useValue: deps.catalog },
        {
          provide: DELIVERY_COUNTERS,
          useValue: deps.deliveryCounters ?? deliveryCountersFor(deps.config),
        },
        { provide: REPORT_STORE, useValue: deps.reportStore },
        { provide: STATE_STORE, useValue: deps.stateStore },
        { provide: CLOCK, useValue: deps.clock ?? (() => new Date()) },
        { provide: APP_FILTER, useClass: ReportingExceptionFilter },
        AuthenticationService,
        DeliveryService,
        RateLimiterService,
        RequestDecoderService,
        ReportRendererService,
        ReportService,
      ],
    };
  }
}
