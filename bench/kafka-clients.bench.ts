import 'reflect-metadata';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { toMessage, type OutgoingMessage } from '@app/events';
import { CompressionTypes, Kafka, logLevel, type Admin } from 'kafkajs';

/**
 * kafkajs against @confluentinc/kafka-javascript (librdkafka), producer and consumer, on the same
 * pre-generated demo events. `npm run bench:kafka-clients` (stack:up first) installs the librdkafka
 * client in bench/kafka-clients (built from source, apart from the root dependencies), builds and
 * runs this file.
 *
 * Every repetition (`--runs`) produces `--events` events into one fresh 4-partition topic per
 * producer configuration (acks -1, idempotent), then reads the kafkajs-written topics (none, gzip)
 * back with each consumer in a fresh group, committing each batch as the event bus does, and
 * deletes its topics. Before each measurement it waits (up to `--quiet-wait` s) for the 1-minute
 * load average to fall under `--quiet-load`. CPU is this process's user + system time, which
 * includes librdkafka's threads; the broker's CPU (on the same machine) is not counted.
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '2' },
    brokers: { type: 'string', default: '127.0.0.1:19092' },
    /** Comma-separated scenario names (see SCENARIOS) or prefixes: `producer`, `consumer`, `kafkajs`... */
    only: { type: 'string' },
    /** Messages per send of the KafkaJS-style producers (the event bus sends 1,000). */
    'send-batch': { type: 'string', default: '1000' },
    /** Sends in flight at once in the KafkaJS-style producers (the event bus awaits each). */
    'in-flight': { type: 'string', default: '1' },
    /** js.consumer.max.batch.size of the confluent KafkaJS consumer (its own default is 32). */
    'ck-max-batch': { type: 'string', default: '1000' },
    /** Messages per consume(n) call of the native librdkafka consumer. */
    'native-consume': { type: 'string', default: '1000' },
    'linger-ms': { type: 'string', default: '5' },
    'quiet-load': { type: 'string', default: '1.5' },
    'quiet-wait': { type: 'string', default: '60' },
  },
});
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const BROKERS = values.brokers.split(',');
const SEND_BATCH = Number(values['send-batch']);
const IN_FLIGHT = Number(values['in-flight']);
const PARTITIONS = 4;
const run = `bench_${Date.now()}`;

// ---- The few parts of @confluentinc/kafka-javascript used here, typed by hand (not installed at the root). ----

type CkCompression = 'none' | 'gzip' | 'lz4';
type RdConfig = Record<string, string | number | boolean>;

interface CkEachBatchPayload {
  readonly batch: {
    readonly topic: string;
    readonly partition: number;
    readonly messages: readonly { readonly value: Buffer | null; readonly offset: string }[];
    lastOffset(): string;
  };
  resolveOffset(offset: string): void;
}

interface CkKafkaJsProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  sendBatch(args: {
    topicMessages: { topic: string; messages: { key: string; value: string }[] }[];
  }): Promise<unknown>;
}

interface CkKafkaJsConsumer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(args: { topics: string[] }): Promise<void>;
  run(args: {
    partitionsConsumedConcurrently: number;
    eachBatchAutoResolve: boolean;
    eachBatch: (payload: CkEachBatchPayload) => Promise<void>;
  }): Promise<void>;
  commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
}

interface CkKafkaJsClient {
  producer(config: {
    kafkaJS: { idempotent: boolean; acks: number; compression: CkCompression; maxInFlightRequests?: number };
    'linger.ms': number;
  }): CkKafkaJsProducer;
  consumer(config: {
    kafkaJS: { groupId: string; fromBeginning: boolean; autoCommit: boolean };
    'js.consumer.max.batch.size': number;
  }): CkKafkaJsConsumer;
}

interface CkNativeMessage {
  readonly value: Buffer | null;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

type Callback = (error: Error | null | undefined) => void;

interface CkNativeProducer {
  connect(options: object, callback: Callback): void;
  disconnect(callback: Callback): void;
  setPollInBackground(set: boolean): void;
  produce(topic: string, partition: number | null, value: Buffer, key: string): void;
  on(event: 'delivery-report', listener: (error: Error | null) => void): void;
}

interface CkNativeConsumer {
  connect(options: object, callback: Callback): void;
  disconnect(callback: Callback): void;
  subscribe(topics: string[]): void;
  consume(count: number, callback: (error: Error | null, messages: CkNativeMessage[]) => void): void;
  commit(offsets: { topic: string; partition: number; offset: number }[]): void;
}

interface CkModule {
  KafkaJS: { Kafka: new (config: { kafkaJS: { brokers: string[]; logLevel: number } }) => CkKafkaJsClient };
  Producer: new (config: RdConfig) => CkNativeProducer;
  KafkaConsumer: new (config: RdConfig, topicConfig: RdConfig) => CkNativeConsumer;
  librdkafkaVersion: string;
}

const requireBench = createRequire(path.resolve(__dirname, '../../bench/kafka-clients/package.json'));
const ck = requireBench('@confluentinc/kafka-javascript') as CkModule;
const ckVersion = (requireBench('@confluentinc/kafka-javascript/package.json') as { version: string })
  .version;

// ---- Measurement helpers. ----

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** Waits up to --quiet-wait seconds for the 1-minute load average to fall under --quiet-load. */
async function quiet(): Promise<string> {
  const limit = Number(values['quiet-load']);
  const deadline = Date.now() + Number(values['quiet-wait']) * 1000;
  while (loadavg()[0] >= limit && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 2000));
  }
  return `${load()}${loadavg()[0] >= limit ? ' (not quiet)' : ''}`;
}

function cpuMicros(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

interface Measured {
  readonly events: number;
  readonly seconds: number;
  readonly cpuMicros: number;
  /** What the rate leaves out (a consumer's group join), for the log. */
  readonly note?: string;
}

function events(): OutgoingMessage[] {
  const out: OutgoingMessage[] = [];
  for (const event of generateDemoTraffic(loadCatalog(), {
    days: 30,
    eventsPerDay: Math.ceil(EVENTS / 30),
    now: new Date(),
    seed: 3,
  })) {
    out.push(toMessage(event));
    if (out.length === EVENTS) {
      break;
    }
  }
  return out;
}

// ---- Producers. ----

const KAFKAJS_COMPRESSION: Readonly<Record<string, CompressionTypes>> = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
};

/** Sends `messages` in requests of SEND_BATCH, IN_FLIGHT at once, in order (one at a time by default). */
async function sendAll(
  messages: readonly OutgoingMessage[],
  send: (slice: { key: string; value: string }[]) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < messages.length) {
      const from = next;
      next += SEND_BATCH;
      await send(messages.slice(from, from + SEND_BATCH).map((m) => ({ key: m.key, value: m.value })));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

async function produceKafkajs(topic: string, compression: string, messages: readonly OutgoingMessage[]) {
  const kafka = new Kafka({ clientId: `${run}-producer`, brokers: BROKERS, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sendAll(messages, (slice) =>
    producer.sendBatch({
      acks: -1,
      compression: KAFKAJS_COMPRESSION[compression],
      topicMessages: [{ topic, messages: slice }],
    }),
  );
  const measured = {
    events: messages.length,
    seconds: (performance.now() - started) / 1000,
    cpuMicros: cpuMicros(cpu),
  };
  await producer.disconnect();
  return measured;
}

async function produceCkKafkajs(
  topic: string,
  compression: CkCompression,
  messages: readonly OutgoingMessage[],
) {
  const kafka = new ck.KafkaJS.Kafka({ kafkaJS: { brokers: BROKERS, logLevel: 0 } });
  const producer = kafka.producer({
    kafkaJS: { idempotent: true, acks: -1, compression },
    'linger.ms': Number(values['linger-ms']),
  });
  await producer.connect();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sendAll(messages, (slice) => producer.sendBatch({ topicMessages: [{ topic, messages: slice }] }));
  const measured = {
    events: messages.length,
    seconds: (performance.now() - started) / 1000,
    cpuMicros: cpuMicros(cpu),
  };
  await producer.disconnect();
  return measured;
}

/**
 * The native producer: produce() each message (value as a Buffer) without waiting, delivery reports
 * counted as they arrive; at most 100,000 messages wait for their report at once.
 */
async function produceCkNative(
  topic: string,
  compression: CkCompression,
  messages: readonly OutgoingMessage[],
) {
  const producer = new ck.Producer({
    'metadata.broker.list': BROKERS.join(','),
    'enable.idempotence': true,
    acks: -1,
    'compression.codec': compression,
    'linger.ms': Number(values['linger-ms']),
    'batch.num.messages': 10_000,
    'queue.buffering.max.messages': 200_000,
    partitioner: 'murmur2_random',
    dr_cb: true,
  });
  await new Promise<void>((resolve, reject) =>
    producer.connect({}, (error) => (error ? reject(error) : resolve())),
  );
  producer.setPollInBackground(true);
  let delivered = 0;
  let failed: Error | undefined;
  let wake: (() => void) | undefined;
  producer.on('delivery-report', (error) => {
    if (error) {
      failed ??= error;
    }
    delivered += 1;
    wake?.();
  });
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      wake = () => {
        if (done() || failed) {
          wake = undefined;
          resolve();
        }
      };
      wake();
    });
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < messages.length; i += 1) {
    if (i - delivered >= 100_000) {
      await until(() => i - delivered < 50_000);
    }
    producer.produce(topic, null, Buffer.from(messages[i].value), messages[i].key);
  }
  await until(() => delivered === messages.length);
  const measured = {
    events: messages.length,
    seconds: (performance.now() - started) / 1000,
    cpuMicros: cpuMicros(cpu),
  };
  await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
  if (failed) {
    throw failed;
  }
  return measured;
}

// ---- Consumers: read `total` events from the beginning in a fresh group, values as strings. ----

/**
 * Times from the consumer's creation to the last message, so the first fetch (up to 16 MiB with
 * kafkajs) counts; how much of it the group join and first fetch took is reported apart.
 */
class ReadCounter {
  read = 0;
  bytes = 0;
  private readonly cpu = process.cpuUsage();
  private readonly started = performance.now();
  private first = 0;
  private finish: ((m: Measured) => void) | undefined;
  readonly done = new Promise<Measured>((resolve) => {
    this.finish = resolve;
  });

  constructor(private readonly total: number) {}

  count(values: readonly string[]): void {
    if (this.read === 0) {
      this.first = performance.now();
    }
    this.read += values.length;
    for (const v of values) {
      this.bytes += v.length;
    }
    if (this.read >= this.total && this.finish) {
      const end = performance.now();
      this.finish({
        events: this.read,
        seconds: (end - this.started) / 1000,
        cpuMicros: cpuMicros(this.cpu),
        note: `of which group join and first fetch ${((this.first - this.started) / 1000).toFixed(1)} s`,
      });
      this.finish = undefined;
    }
  }
}

async function consumeKafkajs(topic: string, total: number): Promise<Measured> {
  const kafka = new Kafka({ clientId: `${run}-consumer`, brokers: BROKERS, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `${topic}.kafkajs`,
    allowAutoTopicCreation: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
  });
  const counter = new ReadCounter(total);
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: PARTITIONS,
    eachBatch: async (payload) => {
      const { batch } = payload;
      counter.count(batch.messages.map((m) => m.value?.toString() ?? ''));
      payload.resolveOffset(batch.lastOffset());
      const next = (BigInt(batch.lastOffset()) + 1n).toString();
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
      await payload.heartbeat();
    },
  });
  const measured = await counter.done;
  await consumer.disconnect();
  return measured;
}

async function consumeCkKafkajs(topic: string, total: number): Promise<Measured> {
  const kafka = new ck.KafkaJS.Kafka({ kafkaJS: { brokers: BROKERS, logLevel: 0 } });
  const consumer = kafka.consumer({
    kafkaJS: { groupId: `${topic}.ck-kafkajs`, fromBeginning: true, autoCommit: false },
    'js.consumer.max.batch.size': Number(values['ck-max-batch']),
  });
  const counter = new ReadCounter(total);
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: PARTITIONS,
    eachBatch: async (payload) => {
      const { batch } = payload;
      counter.count(batch.messages.map((m) => m.value?.toString() ?? ''));
      payload.resolveOffset(batch.lastOffset());
      const next = (BigInt(batch.lastOffset()) + 1n).toString();
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
    },
  });
  const measured = await counter.done;
  await consumer.disconnect();
  return measured;
}

/** The native consumer: consume(n) in a loop, an (asynchronous) commit per partition of each batch. */
async function consumeCkNative(topic: string, total: number): Promise<Measured> {
  const consumer = new ck.KafkaConsumer(
    {
      'metadata.broker.list': BROKERS.join(','),
      'group.id': `${topic}.ck-native`,
      'enable.auto.commit': false,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  const counter = new ReadCounter(total);
  await new Promise<void>((resolve, reject) =>
    consumer.connect({}, (error) => (error ? reject(error) : resolve())),
  );
  consumer.subscribe([topic]);
  const n = Number(values['native-consume']);
  while (counter.read < total) {
    const messages = await new Promise<CkNativeMessage[]>((resolve, reject) =>
      consumer.consume(n, (error, got) => (error ? reject(error) : resolve(got))),
    );
    if (messages.length === 0) {
      continue;
    }
    counter.count(messages.map((m) => m.value?.toString() ?? ''));
    const last = new Map<number, number>();
    for (const m of messages) {
      last.set(m.partition, m.offset);
    }
    consumer.commit([...last].map(([partition, offset]) => ({ topic, partition, offset: offset + 1 })));
  }
  const measured = await counter.done;
  await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  return measured;
}

// ---- Scenarios. ----

interface Scenario {
  readonly name: string;
  readonly kind: 'producer' | 'consumer';
  /** Producers: the compression; consumers: the compression of the kafkajs-written topic read. */
  readonly compression: CkCompression;
  readonly measure: (topic: string, messages: readonly OutgoingMessage[]) => Promise<Measured>;
}

const SCENARIOS: readonly Scenario[] = [
  ...(['none', 'gzip'] as const).map((c): Scenario => ({
    name: `producer kafkajs sendBatch ${c}`,
    kind: 'producer',
    compression: c,
    measure: (t, m) => produceKafkajs(t, c, m),
  })),
  ...(['none', 'gzip', 'lz4'] as const).map((c): Scenario => ({
    name: `producer confluent KafkaJS-API sendBatch ${c}`,
    kind: 'producer',
    compression: c,
    measure: (t, m) => produceCkKafkajs(t, c, m),
  })),
  ...(['none', 'gzip', 'lz4'] as const).map((c): Scenario => ({
    name: `producer confluent native produce ${c}`,
    kind: 'producer',
    compression: c,
    measure: (t, m) => produceCkNative(t, c, m),
  })),
  ...(['none', 'gzip'] as const).flatMap((c): Scenario[] => [
    {
      name: `consumer kafkajs eachBatch ${c}`,
      kind: 'consumer',
      compression: c,
      measure: (t, m) => consumeKafkajs(t, m.length),
    },
    {
      name: `consumer confluent KafkaJS-API eachBatch ${c}`,
      kind: 'consumer',
      compression: c,
      measure: (t, m) => consumeCkKafkajs(t, m.length),
    },
    {
      name: `consumer confluent native consume(n) ${c}`,
      kind: 'consumer',
      compression: c,
      measure: (t, m) => consumeCkNative(t, m.length),
    },
  ]),
];

function selected(s: Scenario): boolean {
  if (!values.only) {
    return true;
  }
  return values.only.split(',').some((word) => s.name.includes(word.trim()));
}

function topicName(repetition: number, producer: string, compression: string): string {
  return `${run}.r${repetition}.${producer}.${compression}`;
}

async function createTopic(admin: Admin, topic: string): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
  });
}

async function main(): Promise<void> {
  const scenarios = SCENARIOS.filter(selected);
  console.log(
    `kafkajs against @confluentinc/kafka-javascript ${ckVersion} (librdkafka ${ck.librdkafkaVersion}); ` +
      `${EVENTS} events, ${PARTITIONS} partitions, ${RUNS} runs; sends of ${SEND_BATCH}, ${IN_FLIGHT} in flight; ` +
      `run ${run}; load average ${load()}`,
  );
  const generated = performance.now();
  const messages = events();
  const bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.value) + Buffer.byteLength(m.key), 0);
  console.log(
    `generated ${messages.length} events (${(bytes / messages.length).toFixed(0)} bytes each on average, key and value) ` +
      `in ${((performance.now() - generated) / 1000).toFixed(1)} s, before any timing`,
  );
  const admin = new Kafka({ brokers: BROKERS, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const created = new Set<string>();
  const results = new Map<string, { rate: number; cpu: number; load: string }[]>();
  try {
    for (let r = 1; r <= RUNS; r += 1) {
      for (const scenario of scenarios) {
        // A consumer reads the topic kafkajs wrote in this repetition, written for it if that producer was not run.
        const topic =
          scenario.kind === 'producer'
            ? topicName(r, scenario.name.split(' ').slice(1, 3).join('-'), scenario.compression)
            : topicName(r, 'kafkajs-sendBatch', scenario.compression);
        if (!created.has(topic)) {
          await createTopic(admin, topic);
          created.add(topic);
          if (scenario.kind === 'consumer') {
            console.log(`  (writing ${topic} for the consumers)`);
            await produceKafkajs(topic, scenario.compression, messages);
          }
        } else if (scenario.kind === 'producer') {
          throw new Error(`topic ${topic} written twice`);
        }
        const before = await quiet();
        const m = await scenario.measure(topic, messages);
        const after = load();
        const rate = m.events / m.seconds;
        const cpu = m.cpuMicros / m.events;
        console.log(
          `run ${r} ${scenario.name}: ${m.events} events in ${m.seconds.toFixed(2)} s, ${Math.round(rate)}/s; ` +
            `${cpu.toFixed(1)} µs CPU/event (${(m.cpuMicros / 1e6 / m.seconds).toFixed(2)} cores)` +
            `${m.note ? `; ${m.note}` : ''}; load average before ${before}, after ${after}`,
        );
        const list = results.get(scenario.name) ?? [];
        list.push({ rate, cpu, load: before });
        results.set(scenario.name, list);
      }
      // The repetition's topics are read: delete them (a 1M-event topic holds hundreds of MB).
      const mine = [...created].filter((t) => t.startsWith(`${run}.r${r}.`));
      await admin.deleteTopics({ topics: mine });
      for (const t of mine) {
        created.delete(t);
      }
    }
  } finally {
    if (created.size > 0) {
      await admin.deleteTopics({ topics: [...created] }).catch((error: unknown) => console.error(error));
    }
    await admin.disconnect();
  }
  console.log('\nsummary (each run; min-max):');
  for (const [name, list] of results) {
    const rates = list.map((x) => x.rate);
    const cpus = list.map((x) => x.cpu);
    console.log(
      `${name}: ${rates.map((x) => Math.round(x)).join(', ')} events/s (${Math.round(Math.min(...rates))}-${Math.round(Math.max(...rates))}); ` +
        `${cpus.map((x) => x.toFixed(1)).join(', ')} µs CPU/event`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
