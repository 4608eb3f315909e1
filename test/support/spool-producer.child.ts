import { BaseSettings, loadConfig } from '@app/config';
import { eventBusFrom } from '@app/runtime';

/**
 * A producer process for the spool tests, on the apps' own settings and bus factory (KAFKA_* from
 * the environment, defaults otherwise: client id `adx`, spool `data/spool` under its working
 * folder). Compiled with swc and run by test/integration/kafka-spool-processes.test.ts.
 *
 * `publish <topic> <id-prefix> <count>`: publishes `count` events with distinct ids, 20 per
 * publish and 8 publishes at once, prints `{"acked":n}` as publishes resolve and `{"published":n}`
 * at the end, then waits to be killed. `drain`: waits until its spool (and those it adopted) reached
 * Kafka, prints `{"drained":true}` and closes.
 */
const settings = loadConfig(BaseSettings, process.env);
const bus = eventBusFrom(settings, (message) => console.error(message));
const [mode, topic = '', prefix = '', count = '0'] = process.argv.slice(2);

async function publish(): Promise<void> {
  const total = Number(count);
  let next = 0;
  let acked = 0;
  const worker = async () => {
    while (next < total) {
      const from = next;
      next = Math.min(total, next + 20);
      const messages = [];
      for (let i = from; i < next; i += 1) {
        messages.push({ key: `slot-${i % 7}`, value: JSON.stringify({ event_id: `${prefix}-${i}` }) });
      }
      await bus.publish(topic, messages);
      acked += messages.length;
      console.log(JSON.stringify({ acked }));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  console.log(JSON.stringify({ published: acked }));
  // Serving on: the replay timer keeps running (and failing, while Kafka is down) until the kill.
  setInterval(() => undefined, 60_000);
}

async function drain(): Promise<void> {
  await bus.drain();
  console.log(JSON.stringify({ drained: true }));
  await bus.close();
}

(mode === 'publish' ? publish() : drain()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
