import type { Catalog } from '@app/catalog';
import { TOPIC_BY_TYPE, toMessage, type EventBus, type OutgoingMessage } from '@app/events';
import { generateDemoTraffic, type DemoTrafficOptions } from './demo-traffic.generator';

const CHUNK = 5_000;

/**
 * Sends generated traffic through the event bus, the same path as live events, and waits until
 * the ingest has handled all of it. Returns the number of events sent.
 */
export async function seedDemoTraffic(
  bus: EventBus,
  catalog: Catalog,
  options: DemoTrafficOptions,
  onProgress?: (sent: number) => void,
): Promise<number> {
  const pending = new Map<string, OutgoingMessage[]>();
  let sent = 0;
  const flush = async (topic: string, messages: OutgoingMessage[]) => {
    pending.set(topic, []);
    await bus.publish(topic, messages);
    sent += messages.length;
    onProgress?.(sent);
  };
  for (const event of generateDemoTraffic(catalog, options)) {
    const topic = TOPIC_BY_TYPE[event.type];
    const queue = pending.get(topic) ?? [];
    queue.push(toMessage(event));
    pending.set(topic, queue);
    if (queue.length >= CHUNK) {
      await flush(topic, queue);
    }
  }
  for (const [topic, queue] of pending) {
    if (queue.length > 0) {
      await flush(topic, queue);
    }
  }
  await bus.drain();
  return sent;
}
