import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { CompressionTypes, Kafka, logLevel, type Admin, type Consumer, type Producer } from 'kafkajs';
import { spoolBytes, consumerLag } from '@app/observability';
import type { BatchHandler, EventBus, OutgoingMessage, Subscription } from './event-bus.port';
import { ConsumerFence, timingsAccepted, type ConsumerTimings } from './kafka-consumer-fence';

export interface KafkaBusOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  /** Prefixed to every topic name on the cluster; the bus's users see the plain names. */
  readonly topicPrefix?: string;
  /** Partitions of every topic this bus creates. */
  readonly partitions: number;
  /** Where events wait while Kafka is unreachable; replayed in order when it returns. */
  readonly spoolDir: string;
  readonly spoolMaxBytes: number;
  /** Batches handled at once per consumer (one per partition at most). */
  readonly concurrentPartitions: number;
  readonly onWarning?: (message: string) => void;
}

interface SpoolEntry {
  readonly topic: string;
  readonly messages: readonly OutgoingMessage[];
}

/**
 * The distributed event bus on Kafka (kafkajs): an idempotent producer with `acks: -1`, gzip
 * batches and an on-disk spool; consumers that handle whole batches and commit a batch's offsets
 * only after the handler resolved, fenced (`ConsumerFence`): a batch whose member may have lost
 * its partition is aborted and never committed.
 */
export class KafkaEventBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly admin: Admin;
  private readonly consumers: Consumer[] = [];
  private readonly fences: ConsumerFence[] = [];
  private timings: Promise<ConsumerTimings> | undefined;
  private readonly groups = new Map<string, readonly string[]>();
  private readonly knownTopics = new Set<string>();
  private readonly spoolFile: string;
  private connected: Promise<void> | undefined;
  private replaying: Promise<void> | undefined;
  private replayTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: KafkaBusOptions) {
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: [...options.brokers],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 2_000 },
      connectionTimeout: 3_000,
    });
    this.producer = this.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
    });
    this.admin = this.kafka.admin();
    mkdirSync(options.spoolDir, { recursive: true });
    this.spoolFile = path.join(options.spoolDir, `${options.clientId}.spool.jsonl`);
    spoolBytes.set(this.spoolSize());
    this.replayTimer = setInterval(() => void this.replaySpool(), 1_000);
    this.replayTimer.unref();
  }

  /** Creates the topics (idempotently) with the configured partition count. */
  async ensureTopics(topics: readonly string[]): Promise<void> {
    const missing = topics.map((t) => this.onCluster(t)).filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) {
      return;
    }
    await this.connect();
    await this.admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({
        topic,
        numPartitions: this.options.partitions,
        replicationFactor: 1,
      })),
    });
    for (const topic of missing) {
      this.knownTopics.add(topic);
    }
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.closed) {
      throw new Error('event bus closed');
    }
    if (messages.length === 0) {
      return;
    }
    if (this.spoolSize() > 0) {
      this.spool({ topic, messages });
      void this.replaySpool();
      return;
    }
    try {
      await this.send({ topic, messages });
    } catch (error) {
      this.options.onWarning?.(
        `Kafka unreachable (${(error as Error).message}); spooling ${messages.length} event(s) to disk`,
      );
      this.spool({ topic, messages });
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
      maxBytesPerPartition: 4 * 1024 * 1024,
      retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000 },
    });
    const fence = new ConsumerFence(consumer, timings);
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
            messages: batch.messages.map((m) => ({
              key: m.key?.toString() ?? '',
              value: m.value?.toString() ?? '',
              offset: m.offset,
              headers: Object.fromEntries(
                Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v ?? '')]),
              ),
            })),
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
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }]);
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

  /** Resolves once the spool is empty and every group has committed up to the end of its topics. */
  async drain(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.spoolSize() === 0 && (await this.caughtUp())) {
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('event bus did not drain in time');
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.replayTimer);
    for (const fence of this.fences) {
      fence.close();
    }
    await Promise.all(this.consumers.map((c) => c.disconnect().catch(() => undefined)));
    await this.producer.disconnect().catch(() => undefined);
    await this.admin.disconnect().catch(() => undefined);
  }

  private onCluster(topic: string): string {
    return `${this.options.topicPrefix ?? ''}${topic}`;
  }

  private plain(topic: string): string {
    const prefix = this.options.topicPrefix ?? '';
    return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic;
  }

  private connect(): Promise<void> {
    this.connected ??= Promise.all([this.producer.connect(), this.admin.connect()]).then(
      () => undefined,
      (error: unknown) => {
        this.connected = undefined;
        throw error;
      },
    );
    return this.connected;
  }

  private async send(entry: SpoolEntry): Promise<void> {
    await this.ensureTopics([entry.topic]);
    await this.producer.sendBatch({
      acks: -1,
      compression: CompressionTypes.GZIP,
      topicMessages: [
        {
          topic: this.onCluster(entry.topic),
          messages: entry.messages.map((m) => ({
            key: m.key,
            value: m.value,
            headers: m.headers ? { ...m.headers } : undefined,
          })),
        },
      ],
    });
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

  /** Bytes waiting on disk, including a replay in progress: while any wait, new events queue behind them. */
  private spoolSize(): number {
    const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
    return size(this.spoolFile) + size(`${this.spoolFile}.replay`);
  }

  private spool(entry: SpoolEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    if (this.spoolSize() + line.length > this.options.spoolMaxBytes) {
      throw new Error(
        `event spool full (${this.options.spoolMaxBytes} bytes): Kafka has been unreachable too long`,
      );
    }
    appendFileSync(this.spoolFile, line);
    spoolBytes.set(this.spoolSize());
  }

  /** Sends the spooled entries in order; stops at the first failure and keeps the rest. */
  private replaySpool(): Promise<void> {
    if (this.replaying || this.spoolSize() === 0 || this.closed) {
      return this.replaying ?? Promise.resolve();
    }
    this.replaying = (async () => {
      const working = `${this.spoolFile}.replay`;
      // A replay file left by a crash is older than the spool: it goes first.
      if (!existsSync(working)) {
        renameSync(this.spoolFile, working);
      }
      const entries = readFileSync(working, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as SpoolEntry);
      let sent = 0;
      try {
        for (const entry of entries) {
          await this.send(entry);
          sent += 1;
        }
        unlinkSync(working);
      } catch {
        const rest = entries
          .slice(sent)
          .map((e) => `${JSON.stringify(e)}\n`)
          .join('');
        const newer = existsSync(this.spoolFile) ? readFileSync(this.spoolFile, 'utf8') : '';
        writeFileSync(`${working}.tmp`, rest + newer);
        renameSync(`${working}.tmp`, this.spoolFile);
        unlinkSync(working);
      }
      spoolBytes.set(this.spoolSize());
    })().finally(() => {
      this.replaying = undefined;
    });
    return this.replaying;
  }
}
