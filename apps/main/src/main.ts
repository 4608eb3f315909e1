import 'reflect-metadata';
import { loadConfig } from '@app/config';
import { seedDemoTraffic } from '@app/demo-traffic';
import { createLogger } from '@app/observability';
import { MainConfig } from './main.config';
import { startEmbeddedSystem } from './embedded-system';

/** `npm start`: the whole system in one process on the embedded adapters, seeded when empty. */
async function main(): Promise<void> {
  const config = loadConfig(MainConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'adx');
  const system = await startEmbeddedSystem(process.env, logger);
  if (config.SEED_ON_EMPTY_DAYS > 0 && (await system.reportStore.isEmpty())) {
    logger.info(
      { days: config.SEED_ON_EMPTY_DAYS, eventsPerDay: config.SEED_EVENTS_PER_DAY },
      'empty store: seeding demo traffic',
    );
    const sent = await seedDemoTraffic(system.bus, system.catalog, {
      days: config.SEED_ON_EMPTY_DAYS,
      eventsPerDay: config.SEED_EVENTS_PER_DAY,
      now: new Date(),
      seed: 2026,
    });
    logger.info({ events: sent }, 'demo traffic seeded');
  }
  logger.info(
    'ready: reporting http://127.0.0.1:8081/api, auction http://127.0.0.1:8080, ingest http://127.0.0.1:8082',
  );
  const stop = () => void system.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
