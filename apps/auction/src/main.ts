import 'reflect-metadata';
import { describeConfig, loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { catalogFrom, startHttpApp } from '@app/runtime';
import { AuctionConfig } from './auction.config';
import { AuctionModule } from './auction.module';

async function main(): Promise<void> {
  const config = loadConfig(AuctionConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'auction');
  logger.info({ config: describeConfig(config) }, 'starting');
  const app = await startHttpApp(AuctionModule.forRoot({ config, catalog: catalogFrom(config) }), {
    host: config.AUCTION_HOST,
    port: config.AUCTION_PORT,
    logger,
    name: 'auction',
  });
  process.once('SIGTERM', () => void app.close());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
