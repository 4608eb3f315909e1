import 'reflect-metadata';
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { GeoResolver } from '@app/audience';
import { describeConfig, loadConfig } from '@app/config';
import { createLogger, joinClusterMetrics, serveClusterMetrics } from '@app/observability';
import { catalogSourceFrom, eventBusFrom, followCatalog, startHttpApp, stateStoreFrom } from '@app/runtime';
import { AuctionConfig, auctionWorkers } from './auction.config';
import { AD_TAG_PATHS, AuctionModule } from './auction.module';

/**
 * The listen backlog: under overload a stalled process must leave new connections waiting, not
 * dropped (a dropped SYN is retried by the client only a second later, then three).
 */
const LISTEN_BACKLOG = 4096;
/**
 * How long the primary waits for its workers to close before it ends them: over a worker's own bounds
 * (requests 5 s, flushing 5 s, the event bus's close 3 s, then the spool's fdatasync), so that no
 * worker is ended with events neither in Kafka nor in its spool.
 */
const SHUTDOWN_WAIT_MS = 20_000;
/** A worker that died is started again after this pause (a crash loop stays slow). */
const RESTART_DELAY_MS = 1000;

async function main(): Promise<void> {
  const config = loadConfig(AuctionConfig, process.env);
  const logger = createLogger(config.LOG_LEVEL, 'auction');
  const workers = auctionWorkers(config);
  if (workers > 1 && cluster.isPrimary) {
    logger.info({ config: describeConfig(config), workers }, 'starting workers');
    return supervise(workers, logger);
  }
  if (cluster.isPrimary) {
    logger.info({ config: describeConfig(config) }, 'starting');
  }
  joinClusterMetrics();
  const bus = eventBusFrom(config, (message) => logger.warn(message));
  const stateStore = stateStoreFrom(config);
  // Each process (each worker) follows the catalog file itself: a change, or a SIGHUP the primary
  // relays, reloads it for the next auction; an invalid file is refused and logged.
  const catalog = catalogSourceFrom(config);
  const stopFollowing = followCatalog(catalog, logger, config.CATALOG_WATCH === 1);
  const app = await startHttpApp(
    AuctionModule.forRoot({
      config,
      catalog,
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
      backlog: LISTEN_BACKLOG,
    },
  );
  // Exits once everything is closed (events flushed, connections ended), which is also when a
  // profiler started with --cpu-prof writes its profile.
  process.once('SIGTERM', () => {
    stopFollowing();
    void app
      .close()
      .then(() => bus.close())
      .then(() => stateStore.close())
      .then(() => process.exit(0));
  });
}

/**
 * The primary of `AUCTION_WORKERS` processes: starts them (they share the listening port), starts
 * again one that dies, gathers their metrics for `/metrics`, relays SIGHUP (reload the catalog)
 * to each of them, and on SIGTERM closes them all, each as a single process closes, before it exits.
 */
function supervise(workers: number, logger: Logger): void {
  serveClusterMetrics();
  let stopping = false;
  const start = (): Worker => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'auction worker died: starting another');
    setTimeout(start, RESTART_DELAY_MS);
  });
  for (let i = 0; i < workers; i += 1) {
    start();
  }
  // The primary serves no catalog: a SIGHUP is for every worker (without a handler it would end
  // the primary).
  process.on('SIGHUP', () => {
    for (const worker of Object.values(cluster.workers ?? {})) {
      worker?.process.kill('SIGHUP');
    }
  });
  process.once('SIGTERM', () => {
    stopping = true;
    const all = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exited = all.map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
    for (const worker of all) {
      worker.process.kill('SIGTERM');
    }
    const deadline = setTimeout(() => {
      logger.error('auction workers did not close in time: ending them');
      all.forEach((w) => w.process.kill('SIGKILL'));
    }, SHUTDOWN_WAIT_MS);
    void Promise.all(exited).then(() => {
      clearTimeout(deadline);
      process.exit(0);
    });
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
