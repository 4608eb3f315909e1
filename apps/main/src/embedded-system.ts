import type { INestApplication } from '@nestjs/common';
import type { Logger } from 'pino';
import { loadConfig } from '@app/config';
import { GeoResolver } from '@app/audience';
import { AD_TAG_PATHS, AuctionConfig, AuctionModule, EventPublisher, TrackerDispatcher } from '@apps/auction';
import { EventBusTransport, IngestConfig, IngestModule, StoreMaintenanceService } from '@apps/ingest';
import { ReportingConfig, ReportingModule, type Clock } from '@apps/reporting';
import { deliveryCountersFor, type DeliveryCounters } from '@app/booking';
import type { Catalog, CatalogSource } from '@app/catalog';
import type { EventBus } from '@app/events';
import type { ReportStore } from '@app/report-store';
import type { StateStore } from '@app/state-store';
import {
  catalogSourceFrom,
  eventBusFrom,
  followCatalog,
  reportStoreFrom,
  startHttpApp,
  stateStoreFrom,
} from '@app/runtime';

export interface EmbeddedSystem {
  /** The catalog serving now. */
  readonly catalog: Catalog;
  /** The catalog's source, which the apps share: it follows CATALOG_PATH (file changes, SIGHUP). */
  readonly catalogs: CatalogSource;
  /** Booked deliveries, counted by the auction and read by the reporting's delivery answer. */
  readonly deliveryCounters: DeliveryCounters;
  readonly bus: EventBus;
  readonly reportStore: ReportStore;
  readonly stateStore: StateStore;
  readonly reporting: INestApplication;
  readonly ingest: INestApplication;
  readonly auction: INestApplication;
  /**
   * Resolves once everything the auction app emitted so far is stored and every tracker call it
   * fired has ended: events flushed to the bus, the bus drained by the ingest.
   */
  /** Resolves once every event sent so far is stored and the closed days are sealed. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The three apps in one process over shared adapters: one report store, one event bus, one state
 * store (embedded unless CLICKHOUSE_URL, KAFKA_BROKERS, REDIS_URL say otherwise). The ingest
 * subscribes before anything can publish.
 */
export async function startEmbeddedSystem(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  clock?: Clock,
  /** The auction's own clock, when it differs from the reporting's (seeding past days). */
  auctionClock: Clock | undefined = clock,
): Promise<EmbeddedSystem> {
  const reportingConfig = loadConfig(ReportingConfig, env);
  const ingestConfig = loadConfig(IngestConfig, env);
  // The auction shares this process's event loop with the ingest and the reporting, whose work
  // would read as the auction's overload: no shedding here unless asked for.
  const auctionConfig = loadConfig(AuctionConfig, { AUCTION_SHED_LAG_MS: '0', ...env });
  const catalog = catalogSourceFrom(reportingConfig);
  const stopFollowing = followCatalog(catalog, logger, reportingConfig.CATALOG_WATCH === 1);
  const deliveryCounters = deliveryCountersFor(auctionConfig);
  const reportStore = await reportStoreFrom(reportingConfig, reportingConfig.QUERY_TIMEOUT_MS);
  const stateStore = stateStoreFrom(reportingConfig);
  const bus = eventBusFrom(ingestConfig, (message) => logger.warn(message));

  const ingest = await startHttpApp(IngestModule.forRoot({ config: ingestConfig, bus, reportStore }), {
    host: ingestConfig.INGEST_HOST,
    port: ingestConfig.INGEST_PORT,
    logger,
    name: 'ingest',
    transports: [new EventBusTransport(bus, ingestConfig.INGEST_GROUP_ID)],
  });
  const reporting = await startHttpApp(
    ReportingModule.forRoot({
      config: reportingConfig,
      catalog,
      deliveryCounters,
      reportStore,
      stateStore,
      clock,
    }),
    { host: reportingConfig.REPORTING_HOST, port: reportingConfig.REPORTING_PORT, logger, name: 'reporting' },
  );
  const auction = await startHttpApp(
    AuctionModule.forRoot({
      config: auctionConfig,
      catalog,
      deliveryCounters,
      bus,
      stateStore,
      geo: await GeoResolver.open(),
      clock: auctionClock,
    }),
    {
      host: auctionConfig.AUCTION_HOST,
      port: auctionConfig.AUCTION_PORT,
      logger,
      name: 'auction',
      highVolumePaths: AD_TAG_PATHS,
    },
  );

  return {
    get catalog() {
      return catalog.current;
    },
    catalogs: catalog,
    deliveryCounters,
    bus,
    reportStore,
    stateStore,
    reporting,
    ingest,
    auction,
    async settle() {
      await auction.get(EventPublisher).flush();
      await auction.get(TrackerDispatcher).settled();
      await bus.drain();
      // Closed days are final once sealed (docs/exactness.md#clickhouse-and-sealing).
      await ingest.get(StoreMaintenanceService).sealNow();
    },
    async close() {
      stopFollowing();
      await auction.close();
      await reporting.close();
      await bus.drain();
      await ingest.close();
      await bus.close();
      await stateStore.close();
      await reportStore.close();
    },
  };
}
