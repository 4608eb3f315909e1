import { ReportStoreErrorCode, ReportStoreException } from './report-store.exception';

/**
 * The time a query may spend in the store, spent only while waiting on it: a timer interrupts the
 * query when a wait outlasts what is left. A wait whose work succeeded returns its value even when
 * it ended past the limit (the interrupt came too late to matter, or the timer had not run yet);
 * the next wait then fails as a timeout before it starts.
 */
export class WaitBudget {
  private left: number;
  private timer: NodeJS.Timeout | undefined;
  spent = false;

  constructor(
    limitMs: number,
    private readonly interrupt: () => void,
  ) {
    this.left = limitMs;
  }

  async wait<T>(work: () => Promise<T>): Promise<T> {
    if (this.left <= 0) {
      this.spent = true;
      throw new ReportStoreException(ReportStoreErrorCode.Timeout, 'query timed out');
    }
    const started = Date.now();
    this.timer = setTimeout(() => {
      this.spent = true;
      this.interrupt();
    }, this.left);
    try {
      return await work();
    } finally {
      this.left -= Date.now() - started;
      this.stop();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
