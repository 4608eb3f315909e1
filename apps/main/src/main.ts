import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { driveAdTagTraffic, seedDemoTraffic } from '@app/demo-traffic';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import { MainConfig } from './main.config';
import { startDemoDsps } from './demo-dsps';
import { startEmbeddedSystem } from './embedded-system';

const DAY_MS = 86_400_000;

/**
 * `npm start`: the whole system in one process on the embedded adapters, with simulated DSPs,
 * seeded when empty: the generator fills the older days, and yesterday's opens, clicks and
 * conversions go through the real ad tag and auction, on an auction clock set to yesterday.
 */
async function main(): Promise<void> {
  const config = loadConfig(MainConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'adx');
  let auctionOffsetMs = 0;
  // The demo's DSPs answer on loopback: their notices, trackers and native images are called there.
  const env = config.DEMO_DSPS === 1 ? { DSP_URL_ALLOW_PRIVATE: '1', ...process.env } : process.env;
  const system = await startEmbeddedSystem(
    env,
    logger,
    () => new Date(),
    () => new Date(Date.now() + auctionOffsetMs),
  );
  const dsps = config.DEMO_DSPS === 1 ? await startDemoDsps(system.catalog, logger) : [];
  const auctionUrl = `http://127.0.0.1:${listeningPort(system.auction)}`;
  // A clean stop closes the apps (events flushed, bus drained, offsets committed), then the stores
  // (DuckDB checkpointed), and exits 0; also when it comes during seeding.
  const stop = () =>
    void system
      .close()
      .then(() => Promise.all(dsps.map((dsp) => dsp.close())))
      .then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (config.SEED_ON_EMPTY_DAYS > 0 && (await system.reportStore.isEmpty())) {
    const now = new Date();
    const yesterdayNoon = new Date(Date.parse(now.toISOString().slice(0, 10)) - DAY_MS / 2);
    logger.info(
      { days: config.SEED_ON_EMPTY_DAYS, eventsPerDay: config.SEED_EVENTS_PER_DAY },
      'empty store: seeding demo traffic',
    );
    const sent = await seedDemoTraffic(system.bus, system.catalog, {
      days: config.SEED_ON_EMPTY_DAYS - 1,
      eventsPerDay: config.SEED_EVENTS_PER_DAY,
      now: yesterdayNoon,
      seed: 2026,
    });
    logger.info({ events: sent }, 'generated demo traffic seeded');
    if (config.SEED_AUCTION_OPENS > 0) {
      auctionOffsetMs = yesterdayNoon.getTime() - Date.now();
      const result = await driveAdTagTraffic(system.catalog, {
        auctionUrl,
        opens: config.SEED_AUCTION_OPENS,
        concurrency: 32,
        seed: 2026,
        dropId: yesterdayNoon.toISOString().slice(0, 10).replace(/-/g, ''),
      });
      await system.settle();
      auctionOffsetMs = 0;
      logger.info(result, "yesterday's opens sent through the ad tag and the auction");
    }
  }
  logger.info(
    {
      reporting: `http://127.0.0.1:${listeningPort(system.reporting)}/api`,
      auction: auctionUrl,
      newsletter: `${auctionUrl}/demo/newsletter`,
      ingest: `http://127.0.0.1:${listeningPort(system.ingest)}`,
    },
    'ready',
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
