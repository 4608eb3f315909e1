import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventBus, OutgoingMessage } from '@app/events';
import { eventsInFlight } from '@app/observability';
import type { EncodedEvent } from '../core/auction-events';
import { EventPublisher } from './event.publisher';

/** A bus that accepts each batch only when told to, as a slow Kafka would. */
class SlowBus implements EventBus {
  readonly batches: { topic: string; values: string[]; accept: () => void }[] = [];
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    return new Promise((accept) =>
      this.batches.push({ topic, values: messages.map((m) => m.value), accept: () => accept() }),
    );
  }
  subscribe(): never {
    throw new Error('not used');
  }
  async drain(): Promise<void> {}
  pending(): Promise<boolean> {
    return Promise.resolve(this.batches.length > 0);
  }
  async close(): Promise<void> {}
}

const bid = (value: string): EncodedEvent => ({ type: 'bid', key: 'slot', value });
const win = (value: string): EncodedEvent => ({ type: 'win', key: 'slot', value });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const inFlight = async () => (await eventsInFlight.get()).values[0]?.value ?? 0;

describe('EventPublisher', () => {
  it('keeps one batch per topic in flight, and sends what came meanwhile as the next batch', async () => {
    const bus = new SlowBus();
    const publisher = new EventPublisher(bus);
    publisher.publish([bid('1'), win('w1')]);
    await sleep(20);
    expect(bus.batches.map((b) => [b.topic, b.values])).toEqual([
      ['adx.bid', ['1']],
      ['adx.win', ['w1']],
    ]);
    publisher.publish([bid('2')]);
    publisher.publish([bid('3'), win('w2')]);
    await sleep(20);
    // The bid topic's batch is still in flight: its events wait; the win topic's too.
    expect(bus.batches).toHaveLength(2);
    bus.batches[0].accept();
    await sleep(1);
    expect(bus.batches.map((b) => [b.topic, b.values])[2]).toEqual(['adx.bid', ['2', '3']]);
    const flushed = publisher.flush();
    bus.batches[1].accept();
    await sleep(1);
    expect(bus.batches[3]).toMatchObject({ topic: 'adx.win', values: ['w2'] });
    bus.batches[2].accept();
    bus.batches[3].accept();
    await flushed;
    expect(bus.batches).toHaveLength(4);
  });

  describe('shutdown', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('hands every buffered event to a bus that takes none within its bounds (5 s of requests, 5 s of flushing), counting them in flight until then', async () => {
      vi.useFakeTimers();
      const bus = new SlowBus();
      const publisher = new EventPublisher(bus);
      const before = await inFlight();
      publisher.publish([bid('1')]);
      await vi.advanceTimersByTimeAsync(5);
      publisher.publish([bid('2'), bid('3'), win('w1')]);
      await vi.advanceTimersByTimeAsync(5);
      // The bid topic's batch is out and never taken (Kafka failing over): 2 and 3 wait behind it.
      expect(bus.batches.map((b) => [b.topic, b.values])).toEqual([
        ['adx.bid', ['1']],
        ['adx.win', ['w1']],
      ]);
      expect((await inFlight()) - before).toBe(2);
      let closed = false;
      void publisher.onApplicationShutdown().then(() => {
        closed = true;
      });
      await vi.advanceTimersByTimeAsync(4_999);
      expect(closed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(closed).toBe(true);
      // Handed over at once: the bus's close delivers or spools them, the bus counts them from here.
      expect(bus.batches.map((b) => [b.topic, b.values])[2]).toEqual(['adx.bid', ['2', '3']]);
      expect((await inFlight()) - before).toBe(0);
    });
  });
});
