import { describe, expect, it } from 'vitest';
import { ReportStoreErrorCode } from './report-store.exception';
import { WaitBudget } from './wait-budget';

/** Holds the thread, as a query finishing on the main thread would: no timer can run meanwhile. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spinning on purpose
  }
}

describe('WaitBudget', () => {
  it('returns a result that arrived after the limit, before the timer could interrupt it', async () => {
    let interrupted = 0;
    const budget = new WaitBudget(10, () => (interrupted += 1));
    const value = await budget.wait(() => {
      busy(30);
      return Promise.resolve('rows');
    });
    expect(value).toBe('rows');
    expect(interrupted).toBe(0);
    await expect(budget.wait(() => Promise.resolve('more'))).rejects.toMatchObject({
      code: ReportStoreErrorCode.Timeout,
    });
  });

  it('interrupts a wait that outlasts what is left, and what the store answers is its own failure', async () => {
    let interrupted = 0;
    const budget = new WaitBudget(20, () => (interrupted += 1));
    await budget.wait(() => new Promise((r) => setTimeout(r, 5)));
    await expect(
      budget.wait(() => new Promise((_, reject) => setTimeout(() => reject(new Error('interrupted')), 50))),
    ).rejects.toThrow('interrupted');
    expect(interrupted).toBe(1);
    expect(budget.spent).toBe(true);
  });
});
