import 'reflect-metadata';
import { describeConfig, loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { eventBusFrom, reportStoreFrom, startHttpApp } from '@app/runtime';
import { IngestConfig } from './ingest.config';
import { IngestModule } from './ingest.module';
import { EventBusTransport } from './event-bus.transport';

/**
 * The ingest app alone. On the embedded bus it only sees events published in its own process, so
 * alone it is useful with the distributed bus; `npm start` runs it beside the other apps.
 */
async function main(): Promise<void> {
  const config = loadConfig(IngestConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'ingest');
  logger.info({ config: describeConfig(config) }, 'starting');
  const reportStore = await reportStoreFrom(config, undefined, config.CLICKHOUSE_INSERT_QUORUM);
  const bus = eventBusFrom(
    config,
    (message) => logger.warn(message),
    (error) => {
      // kafkajs will not restart this consumer: only a new process consumes again.
      logger.fatal({ err: error }, 'the event consumer stopped for good; exiting for a restart');
      process.exit(1);
    },
  );
  const app = await startHttpApp(IngestModule.forRoot({ config, bus, reportStore }), {
    host: config.INGEST_HOST,
    port: config.INGEST_PORT,
    logger,
    name: 'ingest',
    transports: [new EventBusTransport(bus, config.INGEST_GROUP_ID)],
  });
  process.once(
    'SIGTERM',
    () =>
      void app
        .close()
        .then(() => bus.close())
        .then(() => reportStore.close()),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
