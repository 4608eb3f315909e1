import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { EventBus } from '@app/events';
import type { IngestProgress } from './ingest-progress';

export interface WatchdogSettings {
  /** `/health` is down when events wait and none has been stored for this long. */
  readonly stallMs: number;
  /** The process exits when events wait and no batch has been tried for this long; 0 never. */
  readonly wedgedExitMs: number;
  /** How often the bus is asked whether events wait. */
  readonly intervalMs?: number;
}

/**
 * Watches the ingest's progress against what waits on the bus: marks it idle when nothing waits,
 * answers the `ingest` health check, and ends the process (status 1) when its consumer stopped
 * handing batches over while events wait, so that its supervisor starts it again: a consumer that
 * stops while the process lives is the failure nothing else would notice.
 */
export class IngestWatchdog implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('IngestWatchdog');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly bus: EventBus,
    private readonly progress: IngestProgress,
    private readonly settings: WatchdogSettings,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), this.settings.intervalMs ?? 1_000);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The health check: rejects when events have waited longer than `stallMs` without being stored. */
  async check(): Promise<void> {
    const stalled = this.progress.stalledFor(await this.bus.pending());
    if (stalled > this.settings.stallMs) {
      throw new Error(
        `events wait and none was stored for ${Math.round(stalled / 1000)} s` +
          (this.progress.failing ? ' (the report store refuses them and they are being retried)' : ''),
      );
    }
  }

  /** One look at the bus; public for tests. */
  async tick(): Promise<void> {
    let pending: boolean;
    try {
      pending = await this.bus.pending();
    } catch {
      // The bus cannot tell (Kafka unreachable): neither idle nor wedged.
      return;
    }
    if (!pending) {
      this.progress.idle();
      return;
    }
    const wedged = this.progress.wedgedFor(pending);
    if (this.settings.wedgedExitMs > 0 && wedged > this.settings.wedgedExitMs) {
      this.logger.error(
        `events wait and no batch was handed to the ingest for ${Math.round(wedged / 1000)} s: exiting for a restart`,
      );
      this.exit(1);
    }
  }
}
