import { ReportStoreErrorCode, ReportStoreException } from './report-store.exception';

/**
 * The time a query may spend in the store, spent only while waiting on it: a timer interrupts the
 * query when a wait outlasts what is left, and a wait that ends past it fails as a timeout too
 * (an interrupt can arrive after the work it meant to stop).
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
    const started = Date.now();
    this.timer = setTimeout(() => {
      this.spent = true;
      this.interrupt();
    }, this.left);
    try {
      const value = await work();
      this.left -= Date.now() - started;
      if (this.spent || this.left < 0) {
        this.spent = true;
        throw new ReportStoreException(ReportStoreErrorCode.Timeout, 'query timed out');
      }
      return value;
    } finally {
      this.stop();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
