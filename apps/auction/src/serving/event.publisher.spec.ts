import { describe, expect, it } from 'vitest';
import type { EventBus, OutgoingMessage } from '@app/events';
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
});
