import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { sealPassDuration, sealedDays, storeMaintenanceFailures } from '@app/observability';
import { REPORT_STORE, type ReportStore } from '@app/report-store';
import { INGEST_CONFIG, INGEST_CLOCK, type Clock } from './ingest.tokens';
import type { IngestConfig } from './ingest.config';

/** A job run every `intervalMs`, never twice at once; a failure is logged and the next run tries again. */
class PeriodicJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<void>,
  ) {}

  start(): void {
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
      this.timer.unref();
      void this.runOnce();
    }
  }

  /** A run that starts after this call: the one in progress, if any, may have read too early. */
  async runFresh(): Promise<void> {
    await this.running;
    await this.runOnce();
  }

  runOnce(): Promise<void> {
    this.running ??= this.work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * The report store's periodic work: sealing closed days (what makes ClickHouse's exact splits
 * exact after a failure half-way, a retry or a zombie write) and retention.
 */
@Injectable()
export class StoreMaintenanceService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('StoreMaintenance');
  private readonly sealing: PeriodicJob;
  private readonly retention: PeriodicJob;

  constructor(
    @Inject(REPORT_STORE) private readonly store: ReportStore,
    @Inject(INGEST_CONFIG) config: IngestConfig,
    @Inject(INGEST_CLOCK) private readonly clock: Clock,
  ) {
    this.sealing = new PeriodicJob(config.SEAL_INTERVAL_MS, () => this.guard('seal', () => this.seal()));
    this.retention = new PeriodicJob(config.RETENTION_INTERVAL_MS, () =>
      this.guard('retention', () => this.dropExpired()),
    );
  }

  onApplicationBootstrap(): void {
    this.sealing.start();
    this.retention.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.sealing.stop(), this.retention.stop()]);
  }

  /** A pass of sealing that starts now or later, never earlier (settling the embedded system). */
  sealNow(): Promise<void> {
    return this.sealing.runFresh();
  }

  private async seal(): Promise<void> {
    const timer = sealPassDuration.startTimer();
    const result = await this.store.seal(this.clock()).finally(() => timer());
    if (result.sealed.length > 0) {
      sealedDays.inc(result.sealed.length);
      this.logger.log(`sealed ${result.sealed.join(', ')} (${result.final} closed day(s) already final)`);
    }
  }

  private async dropExpired(): Promise<void> {
    const dropped = await this.store.dropExpired(this.clock());
    if (dropped.length > 0) {
      this.logger.log(`retention dropped the raw events of ${dropped.length} day(s): ${dropped.join(', ')}`);
    }
  }

  private async guard(job: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      storeMaintenanceFailures.inc({ job });
      this.logger.warn(`${job} failed, will try again: ${(error as Error).message}`);
    }
  }
}
