import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeBatch, type DeliveredBatch, type EventBus } from '@app/events';

/** What every event bus adapter must do for the ingest. */
export function eventBusContract(name: string, create: () => Promise<EventBus>): void {
  describe(`event bus contract: ${name}`, () => {
    let bus: EventBus;
    let topic = '';
    let run = 0;

    beforeEach(async () => {
      bus = await create();
      topic = `contract.${process.pid}.${Date.now()}.${run++}`;
    });
    afterEach(async () => {
      await bus.close();
    });

    it('delivers every message once, in order per key, in batches', async () => {
      const received: DeliveredBatch[] = [];
      await bus.subscribe('g1', [topic], async (batch) => {
        received.push(batch);
      });
      const messages = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i % 7}`, value: String(i) }));
      await bus.publish(topic, messages);
      await bus.drain();
      const values = received.flatMap((b) => b.messages.map((m) => m.value));
      expect([...values].sort((a, b) => Number(a) - Number(b))).toEqual(messages.map((m) => m.value));
      for (let k = 0; k < 7; k += 1) {
        const ofKey = received.flatMap((b) =>
          b.messages.filter((m) => m.key === `k${k}`).map((m) => Number(m.value)),
        );
        expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
      }
      expect(received.length).toBeLessThan(1000);
    });

    it('redelivers the same batch after a handler failure', async () => {
      const ids: string[] = [];
      let failures = 0;
      await bus.subscribe('g2', [topic], async (batch) => {
        ids.push(describeBatch(batch));
        if (failures < 2) {
          failures += 1;
          throw new Error('store down');
        }
      });
      await bus.publish(topic, [{ key: 'a', value: '1' }]);
      await bus.drain();
      expect(ids).toHaveLength(3);
      expect(new Set(ids).size).toBe(1);
    });

    it('gives each consumer group its own copy', async () => {
      const a: string[] = [];
      const b: string[] = [];
      await bus.subscribe('ga', [topic], async (batch) => void a.push(...batch.messages.map((m) => m.value)));
      await bus.subscribe('gb', [topic], async (batch) => void b.push(...batch.messages.map((m) => m.value)));
      await bus.publish(topic, [{ key: 'x', value: 'one' }]);
      await bus.drain();
      expect(a).toEqual(['one']);
      expect(b).toEqual(['one']);
    });
  });
}
