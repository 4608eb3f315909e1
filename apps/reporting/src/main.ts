import 'reflect-metadata';
import { describeConfig, loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import {
  catalogSourceFrom,
  followCatalog,
  reportStoreFrom,
  startHttpApp,
  stateStoreFrom,
} from '@app/runtime';
import { ReportingConfig } from './reporting.config';
import { ReportingModule } from './reporting.module';

/** The reporting app alone: `POST /api` over the configured report store. */
async function main(): Promise<void> {
  const config = loadConfig(ReportingConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'reporting');
  logger.info({ config: describeConfig(config) }, 'starting');
  const reportStore = await reportStoreFrom(config, config.QUERY_TIMEOUT_MS);
  // Users, accounts and names follow the catalog file: a change or SIGHUP reloads it.
  const catalog = catalogSourceFrom(config);
  followCatalog(catalog, logger, config.CATALOG_WATCH === 1);
  const module = ReportingModule.forRoot({
    config,
    catalog,
    reportStore,
    stateStore: stateStoreFrom(config),
  });
  const app = await startHttpApp(module, {
    host: config.REPORTING_HOST,
    port: config.REPORTING_PORT,
    logger,
    name: 'reporting',
  });
  process.once('SIGTERM', () => void app.close().then(() => reportStore.close()));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
