import { afterEach, describe, expect, it } from 'vitest';
import { InProcessEventBus } from '@app/events';
import { IngestProgress } from './ingest-progress';
import { IngestWatchdog } from './ingest-watchdog';

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('IngestWatchdog', () => {
  const buses: InProcessEventBus[] = [];
  const waiting: (() => void)[] = [];
  let released = false;

  afterEach(async () => {
    released = true;
    for (const resolve of waiting.splice(0)) {
      resolve();
    }
    await Promise.all(buses.splice(0).map((b) => b.close()));
    released = false;
  });

  /** A bus whose one message waits on a handler that has not finished. */
  async function busWithWork(): Promise<InProcessEventBus> {
    const bus = new InProcessEventBus({ retryDelayMs: 5, lingerMs: 1 });
    buses.push(bus);
    await bus.subscribe('g', ['t'], () =>
      released ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve)),
    );
    await bus.publish('t', [{ key: 'k', value: 'v' }]);
    return bus;
  }

  it('is healthy while nothing waits, however long since the last store', async () => {
    const clock = manualClock();
    const bus = new InProcessEventBus({ retryDelayMs: 5, lingerMs: 1 });
    buses.push(bus);
    const watchdog = new IngestWatchdog(bus, new IngestProgress(clock.now), {
      stallMs: 1_000,
      wedgedExitMs: 0,
    });
    clock.advance(60_000);
    await expect(watchdog.check()).resolves.toBeUndefined();
  });

  it('turns down when events wait and none was stored for stallMs, and up again once one is', async () => {
    const clock = manualClock();
    const progress = new IngestProgress(clock.now);
    const watchdog = new IngestWatchdog(await busWithWork(), progress, { stallMs: 1_000, wedgedExitMs: 0 });
    clock.advance(999);
    await expect(watchdog.check()).resolves.toBeUndefined();
    progress.failed();
    clock.advance(2);
    await expect(watchdog.check()).rejects.toThrow(/none was stored for 1 s \(the report store refuses them/);
    progress.stored();
    await expect(watchdog.check()).resolves.toBeUndefined();
  });

  it('exits with status 1 when events wait and no batch was tried for wedgedExitMs, not before, and never at 0', async () => {
    const clock = manualClock();
    const progress = new IngestProgress(clock.now);
    const bus = await busWithWork();
    const exits: number[] = [];
    const watchdog = new IngestWatchdog(bus, progress, { stallMs: 1_000, wedgedExitMs: 5_000 }, (code) =>
      exits.push(code),
    );
    clock.advance(4_000);
    progress.failed(); // a try, refused: the consumer still hands batches over
    clock.advance(4_000);
    await watchdog.tick();
    expect(exits).toEqual([]);
    clock.advance(1_001);
    await watchdog.tick();
    expect(exits).toEqual([1]);

    const never = new IngestWatchdog(
      bus,
      new IngestProgress(clock.now),
      { stallMs: 1_000, wedgedExitMs: 0 },
      (code) => exits.push(code),
    );
    clock.advance(3_600_000);
    await never.tick();
    expect(exits).toEqual([1]);
  });

  it('marks the ingest idle when nothing waits, so that new work starts a new count', async () => {
    const clock = manualClock();
    const progress = new IngestProgress(clock.now);
    const idleBus = new InProcessEventBus({ retryDelayMs: 5, lingerMs: 1 });
    buses.push(idleBus);
    clock.advance(600_000);
    await new IngestWatchdog(idleBus, progress, { stallMs: 1_000, wedgedExitMs: 0 }).tick();
    const watchdog = new IngestWatchdog(await busWithWork(), progress, { stallMs: 1_000, wedgedExitMs: 0 });
    await expect(watchdog.check()).resolves.toBeUndefined();
  });
});
