import 'reflect-metadata';
import { GeoResolver } from '@app/audience';
import { describeConfig, loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { catalogFrom, eventBusFrom, startHttpApp, stateStoreFrom } from '@app/runtime';
import { AuctionConfig } from './auction.config';
import { AD_TAG_PATHS, AuctionModule } from './auction.module';

async function main(): Promise<void> {
  const config = loadConfig(AuctionConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'auction');
  logger.info({ config: describeConfig(config) }, 'starting');
  const bus = eventBusFrom(config, (message) => logger.warn(message));
  const stateStore = stateStoreFrom(config);
  const app = await startHttpApp(
    AuctionModule.forRoot({
      config,
      catalog: catalogFrom(config),
      bus,
      stateStore,
      geo: await GeoResolver.open(),
    }),
    {
      host: config.AUCTION_HOST,
      port: config.AUCTION_PORT,
      logger,
      name: 'auction',
      highVolumePaths: AD_TAG_PATHS,
    },
  );
  // Exits once everything is closed (events flushed, connections ended), which is also when a
  // profiler started with --cpu-prof writes its profile.
  process.once('SIGTERM', () => {
    void app
      .close()
      .then(() => bus.close())
      .then(() => stateStore.close())
      .then(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
