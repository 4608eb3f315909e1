import {
  CompressionTypes,
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type Consumer,
  type KafkaMessage,
  type PartitionMetadata,
  type Producer,
} from 'kafkajs';
import { consumerLag, eventsInFlight } from '@app/observability';
import type {
  BatchHandler,
  DeliveredMessage,
  EventBus,
  OutgoingMessage,
  Subscription,
} from './event-bus.port';
import type { SpoolEntry } from './event-spool';
import { settledWithin } from './settled-within';
import { SpoolDirectory } from './spool-directory';
import { ConsumerFence, membershipLost, timingsAccepted, type ConsumerTimings } from './kafka-consumer-fence';
import { frameRequests, unframe } from './kafka-frame';
import { useFastGzip } from './kafka-gzip.codec';
import { topicReplication } from './kafka-topic-replication';

export interface KafkaBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Prefixed to every topic name on the cluster; the bus's users see the plain names. */
  readonly topicPrefix?: string;
  /** Partitions of every topic this bus creates. */
  readonly partitions: number;
  /**
   * Copies of each partition, on as many brokers, of every topic this bus creates (1 by default: a
   * single broker). Topics that exist already keep theirs (a warning names those with fewer).
   */
  readonly replicationFactor?: number;
  /**
   * The topics' `min.insync.replicas`: the copies that must hold a record before Kafka acknowledges it
   * to the producers' `acks: -1`, so a write is refused (and tried again, held in memory until
   * enough replicas are back or `close()` spools it) rather than acknowledged by fewer. At most
   * `replicationFactor`; by default one less than it (at least 1): a broker of three may be lost
   * without refusing a write, and an acknowledged record is on two brokers at least.
   */
  readonly minInsyncReplicas?: number;
  /** Where events wait while Kafka is unreachable; replayed in order when it returns. */
  readonly spoolDir: string;
  /**
   * How long `close()` keeps sending what it holds (publishes out, then the spool) before it spools
   * what is still out and stops: 3 s by default.
   */
  readonly closeTimeoutMs?: number;
  readonly spoolMaxBytes: number;
  /** Batches handled at once per consumer (one per partition at most). */
  readonly concurrentPartitions: number;
  /**
   * Most bytes fetched for one partition, as stored on the broker (compressed): the bound of a
   * batch handed to the handler. 4 MiB by default.
   */
  readonly maxBytesPerPartition?: number;
  /** How the producer compresses its batches: gzip (the default) or none. */
  readonly compression?: KafkaCompression;
  /**
   * Idempotent producers sending at once, each for the partitions `p` with `p % producers` its index (4 by
   * default, one per partition of the default topics): one keeps a single request in flight (kafkajs holds a
   * lock per broker from encoding to acknowledgement), so another encodes and compresses while it waits. The
   * rates with one and with four: bench/journal/pipeline.md ("four producers, fastest gzip").
   */
  readonly producers?: number;
  readonly onWarning?: (message: string) => void;
  /**
   * A consumer stopped for good: kafkajs crashed it and will not restart it (an error it does not
   * retry). Its partitions are left to the group's other members; a process that consumes alone
   * should exit so that its supervisor starts it again.
   */
  readonly onConsumerStopped?: (error: Error) => void;
}

export const KAFKA_COMPRESSIONS = ['gzip', 'none'] as const;
export type KafkaCompression = (typeof KAFKA_COMPRESSIONS)[number];

const COMPRESSION_TYPES: Readonly<Record<KafkaCompression, CompressionTypes>> = {
  gzip: CompressionTypes.GZIP,
  none: CompressionTypes.None,
};

/** Bytes of spooled entries sent to Kafka in one request while replaying. */
const REPLAY_BATCH_BYTES = 1024 * 1024;

/** Most keys whose partition is remembered per topic. */
const PARTITION_CACHE_KEYS = 100_000;

/**
 * One publish out: its entry, until Kafka acknowledged it or the spool holds it (`landed`). `close()`
 * spools one that outlasts its wait and `overtake()`s it, which ends the publish's wait for its send.
 */
interface Flight {
  readonly entry: SpoolEntry;
  spooled?: Promise<void>;
  readonly overtaken: Promise<false>;
  overtake(): void;
  readonly landed: Promise<void>;
  land(): void;
}

function flightOf(entry: SpoolEntry): Flight {
  let overtake = (): void => undefined;
  let land = (): void => undefined;
  const overtaken = new Promise<false>((resolve) => {
    overtake = () => resolve(false);
  });
  const landed = new Promise<void>((resolve) => {
    land = resolve;
  });
  return { entry, overtaken, overtake, landed, land };
}

interface TopicPartitions {
  readonly partitions: PartitionMetadata[];
  readonly byKey: Map<string, number>;
  readonly at: number;
}

/** How long a topic's partitions are taken as known (the Java client's `metadata.max.age.ms`). */
const METADATA_MAX_AGE_MS = 5 * 60_000;

/**
 * The distributed event bus on Kafka (kafkajs): idempotent producers with `acks: -1`, each for its
 * share of the partitions, sending frames of many messages (`kafka-frame.ts`) in gzip batches, and
 * an on-disk spool; consumers that handle whole batches and commit a batch's offsets only after
 * the handler resolved, fenced (`ConsumerFence`): a batch whose member may have lost its partition
 * is aborted and never committed.
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  /** Producer `i` sends the partitions `p` with `p % producers.length === i`, so each partition's order holds. */
  private readonly producers: Producer[];
  private readonly admin: Admin;
  private readonly consumers: Consumer[] = [];
  private readonly fences: ConsumerFence[] = [];
  private timings: Promise<ConsumerTimings> | undefined;
  private readonly groups = new Map<string, readonly string[]>();
  private readonly knownTopics = new Set<string>();
  private readonly partitions = new Map<string, TopicPartitions>();
  /** kafkajs's own default partitioner: a key lands on the partition it would unframed. */
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly spools: SpoolDirectory;
  private connected: Promise<void> | undefined;
  private replaying: Promise<void> | undefined;
  private replayTimer: NodeJS.Timeout | undefined;
  /** Whether the last replay failed, so that an outage is logged once rather than every second. */
  private replayFailing = false;
  /** Publishes out: neither acknowledged by Kafka nor in the spool yet. */
  private readonly flights = new Set<Flight>();
  /** Set when `close()` begins: no publish is taken any more. */
  private closed = false;
  /** Set when `close()` stops sending: the replay reads no further batch. */
  private stopped = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: KafkaBusOptions) {
    // A replication Kafka would refuse at the first topic fails here, at start.
    topicReplication(options);
    useFastGzip();
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: [...options.brokers],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2_000 },
      connectionTimeout: 3_000,
    });
    this.producers = Array.from({ length: Math.max(1, options.producers ?? 4) }, () =>
      this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // Without end, as kafkajs's idempotent producer has it by default, but never more than
        // 0.5 s apart (the client's 2 s otherwise): a send to a dead broker's partition fails at
        // once and waits for the next try, and kafkajs reads the new leader only after a failed
        // try, so up to two gaps were lost once the controller had moved the partition
        // (docs/distributed.md#broker-failover). A try is a refused connect and a metadata request.
        retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 500 },
      }),
    );
    this.admin = this.kafka.admin();
    this.spools = new SpoolDirectory({
      dir: options.spoolDir,
      name: options.clientId,
      maxBytes: options.spoolMaxBytes,
      onWarning: options.onWarning,
    });
    this.replayTimer = setInterval(() => void this.replaySpool(), 1_000);
    this.replayTimer.unref();
  }

  /**
   * Creates the topics (idempotently) with the configured partitions, replication factor and
   * `min.insync.replicas`, set on each topic rather than left to the brokers' defaults: a topic's
   * durability is then the configuration's, whatever broker created it.
   */
  async ensureTopics(topics: readonly string[]): Promise<void> {
    const missing = topics.map((t) => this.onCluster(t)).filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) {
      return;
    }
    await this.connect();
    const { replicationFactor, minInsyncReplicas } = topicReplication(this.options);
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: this.options.partitions,
        replicationFactor,
        configEntries: [{ name: 'min.insync.replicas', value: String(minInsyncReplicas) }],
      })),
    });
    await this.warnUnderReplicated(missing, replicationFactor);
    for (const topic of missing) {
      this.knownTopics.add(topic);
    }
  }

  /**
   * Resolves once Kafka acknowledged the messages (`acks: -1`, every in-sync replica) or the spool
   * holds them (fdatasynced), to be replayed by this process or by the next one on the same spool.
   * Until then they count in `adx_events_in_flight`.
   */
  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.closed) {
      throw new Error('event bus closed');
    }
    if (messages.length === 0) {
      return;
    }
    const flight = flightOf({ topic, messages });
    this.flights.add(flight);
    eventsInFlight.inc(messages.length);
    try {
      // Behind a non-empty spool, so that events reach Kafka in the order they were published.
      if (this.spools.own.pending() > 0) {
        await this.spool(flight);
        void this.replaySpool();
        return;
      }
      const sent = this.send([flight.entry]).then(
        () => true,
        (error: unknown) => {
          if (!this.stopped) {
            this.options.onWarning?.(
              `Kafka unreachable (${(error as Error).message}); spooling ${messages.length} event(s) to disk`,
            );
          }
          return false;
        },
      );
      // A send that outlasts close()'s wait is spooled by close(): its outcome no longer matters (if
      // it lands after all, the next start sends it again: at least once).
      if (!(await Promise.race([sent, flight.overtaken]))) {
        await this.spool(flight);
      }
    } finally {
      this.flights.delete(flight);
      eventsInFlight.dec(messages.length);
      flight.land();
    }
  }

  async subscribe(groupId: string, topics: readonly string[], handler: BatchHandler): Promise<Subscription> {
    await this.ensureTopics(topics);
    await this.connect();
    this.timings ??= timingsAccepted(this.admin, this.options.onWarning).catch((error: unknown) => {
      this.timings = undefined;
      throw error;
    });
    const timings = await this.timings;
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      ...timings,
      // kafkajs heartbeats after each fetch: an idle fetch must return well within the session.
      maxWaitTimeInMs: Math.min(500, timings.heartbeatInterval),
      maxBytesPerPartition: this.options.maxBytesPerPartition ?? 4 * 1024 * 1024,
      retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
    const fence = new ConsumerFence(consumer, timings);
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart && !this.closed) {
        this.options.onConsumerStopped?.(payload.error);
      }
    });
    await consumer.connect();
    for (const topic of topics) {
      await consumer.subscribe({ topic: this.onCluster(topic), fromBeginning: true });
    }
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.concurrentPartitions,
      eachBatch: async (payload) => {
        const { batch } = payload;
        // Unresolved, a skipped batch is fetched again, by this member once it has rejoined or by the next owner.
        if (!payload.isRunning() || payload.isStale() || !fence.owns() || batch.messages.length === 0) {
          return;
        }
        const aborted = await fence.run(payload, (signal) =>
          handler({
            source: `${batch.topic}/${batch.partition}`,
            topic: this.plain(batch.topic),
            partition: batch.partition,
            messages: this.unframed(batch.messages),
            signal,
          }),
        );
        // The partition may be another member's now: its committed offset is the new owner's to move.
        if (aborted || payload.isStale()) {
          return;
        }
        // Resolving moves the consumer's position; the commit makes it survive a restart.
        payload.resolveOffset(batch.lastOffset());
        const next = (BigInt(batch.lastOffset()) + 1n).toString();
        try {
          await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
        } catch (error) {
          // The member lost the partition between its batch and the commit: the broker holding the
          // group's coordinator died and the new coordinator does not know the member, or the group
          // rebalanced. The batch goes again to its next owner (stored, it is left out); thrown,
          // kafkajs would stop this consumer for good (UNKNOWN_MEMBER_ID is not retriable) where its
          // next heartbeat rejoins the group.
          if (membershipLost(error)) {
            return;
          }
          throw error;
        }
        consumerLag.set(
          { topic: batch.topic, partition: String(batch.partition) },
          Number(batch.offsetLag()),
        );
        await payload.heartbeat();
      },
    });
    this.consumers.push(consumer);
    this.fences.push(fence);
    this.groups.set(groupId, topics);
    return {
      stop: async () => {
        this.groups.delete(groupId);
        await consumer.disconnect();
      },
    };
  }

  async pending(): Promise<boolean> {
    return !(await this.caughtUp());
  }

  /** Resolves once the spool is empty and every group has committed up to the end of its topics. */
  async drain(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      // Kafka unreachable is not drained yet: the spool waits for it, and so does the caller.
      if (
        this.flights.size === 0 &&
        this.spools.pending() === 0 &&
        (await this.caughtUp().catch(() => false))
      ) {
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('event bus did not drain in time');
  }

  /**
   * Takes no publish any more and, for up to `closeTimeoutMs`, delivers what it holds: the publishes
   * out, then the spool. What is still out then goes to the spool (fdatasynced) before the spool and
   * the producers close, so that every publish accepted resolves: Kafka has its messages or the spool
   * does, for the next start on this spool directory.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    this.closed = true;
    clearInterval(this.replayTimer);
    for (const fence of this.fences) {
      fence.close();
    }
    await Promise.all(this.consumers.map((c) => c.disconnect().catch(() => undefined)));
    const waitMs = this.options.closeTimeoutMs ?? 3_000;
    await settledWithin(this.deliverHeld(), waitMs);
    this.stopped = true;
    const out = [...this.flights].filter((flight) => !flight.spooled);
    await Promise.allSettled(
      out.map((flight) => {
        const spooled = this.spool(flight);
        flight.overtake();
        return spooled;
      }),
    );
    const left = this.spools.pending();
    if (left > 0) {
      const events = out.reduce((sum, flight) => sum + flight.entry.messages.length, 0);
      this.options.onWarning?.(
        `closing with events undelivered after ${waitMs} ms (${events} of them still out, spooled now): ` +
          `${left} byte(s) in the spool ${this.options.spoolDir} for the next start`,
      );
    }
    await this.spools.close();
    await Promise.all(this.producers.map((producer) => producer.disconnect().catch(() => undefined)));
    await this.admin.disconnect().catch(() => undefined);
  }

  /** The publishes out landed (in Kafka or the spool), then the spool replayed to its end or to a failed send. */
  private async deliverHeld(): Promise<void> {
    await Promise.all([...this.flights].map((flight) => flight.landed));
    await this.replaySpool();
  }

  private spool(flight: Flight): Promise<void> {
    flight.spooled ??= this.spools.own.append(flight.entry);
    return flight.spooled;
  }

  /**
   * Topics made earlier (by an older release, by hand, with another setting) keep their replicas:
   * Kafka changes them only by a partition reassignment, an operator's decision. Said once a start.
   */
  private async warnUnderReplicated(topics: readonly string[], replicationFactor: number): Promise<void> {
    if (replicationFactor === 1 || !this.options.onWarning) {
      return;
    }
    const { topics: metadata } = await this.admin.fetchTopicMetadata({ topics: [...topics] });
    for (const { name, partitions } of metadata) {
      const fewest = Math.min(...partitions.map((p) => p.replicas.length));
      if (fewest < replicationFactor) {
        this.options.onWarning(
          `topic ${name} has ${fewest} replica(s) a partition, fewer than KAFKA_REPLICATION_FACTOR ${replicationFactor}: ` +
            'it existed before; reassign its partitions (kafka-reassign-partitions) to raise it',
        );
      }
    }
  }

  private onCluster(topic: string): string {
    return `${this.options.topicPrefix ?? ''}${topic}`;
  }

  private plain(topic: string): string {
    const prefix = this.options.topicPrefix ?? '';
    return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic;
  }

  private connect(): Promise<void> {
    this.connected ??= Promise.all([...this.producers.map((p) => p.connect()), this.admin.connect()]).then(
      () => undefined,
      (error: unknown) => {
        this.connected = undefined;
        throw error;
      },
    );
    return this.connected;
  }

  /**
   * Sends entries, each topic's messages in entry order, framed (`kafka-frame.ts`) and
   * acknowledged by all replicas: each producer its partitions' share of each request, one request
   * after the other, the producers at once. A failure part-way leaves the earlier requests (and
   * what the other producers sent) in Kafka and the caller sends (or spools) them all again, once
   * every producer has stopped: at least once, as a lost acknowledgement already is.
   */
  private async send(entries: readonly SpoolEntry[]): Promise<void> {
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const entry of entries) {
      const messages = byTopic.get(entry.topic) ?? [];
      messages.push(...entry.messages);
      byTopic.set(entry.topic, messages);
    }
    await this.ensureTopics([...byTopic.keys()]);
    const compression = COMPRESSION_TYPES[this.options.compression ?? 'gzip'];
    for (const [plainTopic, messages] of byTopic) {
      const topic = this.onCluster(plainTopic);
      const { partitions: partitionMetadata, byKey } = await this.partitionsOf(topic);
      const requests = frameRequests(messages, (key) => {
        let partition = byKey.get(key);
        if (partition === undefined) {
          partition = this.partitioner({ topic, partitionMetadata, message: { key, value: null } });
          // Keys are ad slots: a bounded set, but a generic caller's keys may not be.
          if (byKey.size >= PARTITION_CACHE_KEYS) {
            byKey.clear();
          }
          byKey.set(key, partition);
        }
        return partition;
      });
      const lanes = this.producers.map((producer, lane) => async () => {
        for (const request of requests) {
          const messages = request.filter((m) => m.partition! % this.producers.length === lane);
          if (messages.length > 0) {
            await producer.sendBatch({ acks: -1, compression, topicMessages: [{ topic, messages }] });
          }
        }
      });
      const failed = (await Promise.allSettled(lanes.map((lane) => lane()))).find(
        (result) => result.status === 'rejected',
      );
      if (failed) {
        // Perhaps the partitions changed: the next try reads them again.
        this.partitions.delete(topic);
        throw failed.reason;
      }
    }
  }

  /**
   * A topic's partitions, as the producer's partitioner needs them, with the partition of each key
   * seen (the partitioner hashes the key's bytes every time); read again after a while.
   */
  private async partitionsOf(topic: string): Promise<TopicPartitions> {
    const known = this.partitions.get(topic);
    if (known && Date.now() - known.at < METADATA_MAX_AGE_MS) {
      return known;
    }
    await this.connect();
    const { topics } = await this.admin.fetchTopicMetadata({ topics: [topic] });
    const fresh = { partitions: topics[0].partitions, byKey: new Map<string, number>(), at: Date.now() };
    this.partitions.set(topic, fresh);
    return fresh;
  }

  private unframed(records: readonly KafkaMessage[]): DeliveredMessage[] {
    const messages: DeliveredMessage[] = [];
    for (const record of records) {
      unframe(record, messages);
    }
    return messages;
  }

  private async caughtUp(): Promise<boolean> {
    await this.connect();
    for (const [groupId, topics] of this.groups) {
      for (const topic of topics) {
        const [ends, committed] = await Promise.all([
          this.admin.fetchTopicOffsets(this.onCluster(topic)),
          this.admin.fetchOffsets({ groupId, topics: [this.onCluster(topic)] }),
        ]);
        const done = new Map(committed[0]?.partitions.map((p) => [p.partition, BigInt(p.offset)]) ?? []);
        for (const end of ends) {
          const at = done.get(end.partition) ?? -1n;
          if (BigInt(end.high) > 0n && at < BigInt(end.high)) {
            return false;
          }
        }
      }
    }
    return true;
  }

  /**
   * Sends the spools this process holds (its own, then those adopted from dead processes) in order,
   * a batch at a time, moving each spool's cursor only after Kafka acknowledged the batch. Never
   * rejects: the timer calls it every second, and a failure leaves the rest for the next call.
   */
  private replaySpool(): Promise<void> {
    if (this.stopped) {
      return Promise.resolve();
    }
    this.replaying ??= this.replayAll()
      .then(
        () => {
          this.replayFailing = false;
        },
        (error: unknown) => {
          if (!this.replayFailing) {
            this.options.onWarning?.(
              `spool replay stopped, retrying every second: ${(error as Error).message}`,
            );
          }
          this.replayFailing = true;
        },
      )
      .finally(() => {
        this.replaying = undefined;
      });
    return this.replaying;
  }

  private async replayAll(): Promise<void> {
    this.spools.adoptOrphans();
    for (const spool of this.spools.all()) {
      for (;;) {
        const batch = this.stopped ? undefined : await spool.read(REPLAY_BATCH_BYTES);
        if (!batch) {
          break;
        }
        if (batch.entries.length > 0) {
          await this.send(batch.entries);
        }
        await spool.commit(batch.end);
      }
      if (spool !== this.spools.own && !this.stopped) {
        await this.spools.retire(spool);
      }
    }
  }
}
