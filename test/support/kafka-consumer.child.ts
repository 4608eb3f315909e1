import { KafkaEventBus } from '@app/events';

/**
 * A consumer process for the fencing tests: subscribes one group to one topic and prints a JSON
 * line per batch handled, so that the test sees when a restarted consumer consumes again. Compiled
 * with swc and run by test/integration/kafka-consumer-fencing.test.ts, which kills it with SIGKILL.
 */
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is required`);
  }
  return value;
};

const bus = new KafkaEventBus({
  brokers: [env('FENCING_BROKER')],
  clientId: env('FENCING_CLIENT_ID'),
  topicPrefix: env('FENCING_TOPIC_PREFIX'),
  partitions: 4,
  spoolDir: env('FENCING_SPOOL_DIR'),
  spoolMaxBytes: 16 * 1024 * 1024,
  concurrentPartitions: 2,
  onWarning: (message) => console.error(message),
});

void bus
  .subscribe(env('FENCING_GROUP'), [env('FENCING_TOPIC')], async (batch) => {
    console.log(
      JSON.stringify({ partition: batch.partition, messages: batch.messages.length, at: Date.now() }),
    );
  })
  .then(() => console.log(JSON.stringify({ subscribed: true, at: Date.now() })))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
