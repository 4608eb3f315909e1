import { setTimeout } from 'node:timers/promises';
import type { Catalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { TOPIC_BY_TYPE, toMessage, type EventBus, type OutgoingMessage } from '@app/events';

export interface BackgroundIngest {
  /** Batches published so far. */
  readonly batches: number;
  /** Stops publishing; resolves with the batches published once the last one is on the bus. */
  stop(): Promise<number>;
}

/**
 * Keeps the ingest writing while a test or bench reads reports: a fresh slice of demo traffic on
 * the day before `now` (`eventsPerDay` opens and what follows them; the batch number seeds the
 * event ids, so that none repeats) published on the bus every `intervalMs`, without waiting for it
 * to be stored. The ingest reading the bus writes it to the report store meanwhile.
 */
export function startBackgroundIngest(
  bus: EventBus,
  catalog: Catalog,
  now: Date,
  { intervalMs = 50, eventsPerDay = 60, firstSeed = 1_000 } = {},
): BackgroundIngest {
  let running = true;
  let batches = 0;
  const loop = (async () => {
    while (running) {
      const byTopic = new Map<string, OutgoingMessage[]>();
      for (const event of generateDemoTraffic(catalog, {
        days: 1,
        eventsPerDay,
        now,
        seed: firstSeed + batches,
      })) {
        const topic = TOPIC_BY_TYPE[event.type];
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), toMessage(event)]);
      }
      for (const [topic, messages] of byTopic) {
        await bus.publish(topic, messages);
      }
      batches += 1;
      await setTimeout(intervalMs);
    }
  })();
  return {
    get batches() {
      return batches;
    },
    async stop() {
      running = false;
      await loop;
      return batches;
    },
  };
}
