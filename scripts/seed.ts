import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@app/config';
import { seedDemoTraffic } from '@app/demo-traffic';
import { createLogger, PinoNestLogger } from '@app/observability';
import { catalogFrom, eventBusFrom, reportStoreFrom } from '@app/runtime';
import { IngestConfig, IngestModule } from '@apps/ingest';

/**
 * `npm run seed -- --days N --events-per-day M [--seed S]`: demo traffic through the bus and the
 * ingest into the configured store. Stop `npm start` first: a DuckDB file has one writer process.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      days: { type: 'string', default: '30' },
      'events-per-day': { type: 'string', default: '10000' },
      seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    },
  });
  const days = Number(values.days);
  const eventsPerDay = Number(values['events-per-day']);
  const seed = Number(values.seed);
  if (![days, eventsPerDay, seed].every((n) => Number.isInteger(n) && n >= 0) || days > 366) {
    throw new Error('--days (0-366), --events-per-day and --seed take non-negative integers');
  }
  const config = loadConfig(IngestConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'seed');
  const reportStore = await reportStoreFrom(config);
  const bus = eventBusFrom(config, (message) => logger.warn(message));
  const app = await NestFactory.createApplicationContext(IngestModule.forRoot({ config, bus, reportStore }), {
    logger: new PinoNestLogger(logger),
  });
  await app.init();
  const started = Date.now();
  let reported = 0;
  const sent = await seedDemoTraffic(
    bus,
    catalogFrom(config),
    { days, eventsPerDay, now: new Date(), seed },
    (n) => {
      if (n - reported >= 1_000_000) {
        reported = n;
        logger.info({ sent: n, perSecond: Math.round(n / ((Date.now() - started) / 1000)) }, 'seeding');
      }
    },
  );
  const seconds = (Date.now() - started) / 1000;
  logger.info(
    { events: sent, seconds, perSecond: Math.round(sent / seconds), store: config.DUCKDB_PATH },
    'seeded',
  );
  await app.close();
  await bus.close();
  await reportStore.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
