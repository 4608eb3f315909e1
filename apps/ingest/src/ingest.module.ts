import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_BUS, type EventBus } from '@app/events';
import { APP_FILTER } from '@nestjs/core';
import { ObservabilityModule } from '@app/observability';
import { GenericExceptionFilter } from '@app/runtime';
import { REPORT_STORE, type ReportStore } from '@app/report-store';
import { IngestController } from './ingest.controller';
import { IngestService } from './ingest.service';
import { StoreMaintenanceService } from './store-maintenance.service';
import { IngestProgress } from './ingest-progress';
import { IngestWatchdog } from './ingest-watchdog';
import { INGEST_CLOCK, INGEST_CONFIG, INGEST_RETRY_MAX_MS, type Clock } from './ingest.tokens';
import type { IngestConfig } from './ingest.config';

export interface IngestDependencies {
  readonly config: IngestConfig;
  readonly bus: EventBus;
  readonly reportStore: ReportStore;
  /** Defaults to the system clock. */
  readonly clock?: Clock;
}

@Module({})
export class IngestModule {
  static forRoot(deps: IngestDependencies): DynamicModule {
    const progress = new IngestProgress();
    const watchdog = new IngestWatchdog(deps.bus, progress, {
      stallMs: deps.config.INGEST_STALL_MS,
      wedgedExitMs: deps.config.INGEST_WEDGED_EXIT_MS,
    });
    return {
      module: IngestModule,
      imports: [
        ObservabilityModule.forRoot({
          reportStore: () => deps.reportStore.ping(),
          ingest: () => watchdog.check(),
        }),
      ],
      controllers: [IngestController],
      providers: [
        { provide: APP_FILTER, useClass: GenericExceptionFilter },
        { provide: INGEST_CONFIG, useValue: deps.config },
        { provide: EVENT_BUS, useValue: deps.bus },
        { provide: REPORT_STORE, useValue: deps.reportStore },
        { provide: INGEST_CLOCK, useValue: deps.clock ?? (() => new Date()) },
        { provide: INGEST_RETRY_MAX_MS, useValue: deps.config.INGEST_RETRY_MAX_MS },
        { provide: IngestProgress, useValue: progress },
        { provide: IngestWatchdog, useValue: watchdog },
        IngestService,
        StoreMaintenanceService,
      ],
      exports: [IngestService, StoreMaintenanceService],
    };
  }
}
