import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type {
  BatchHandler,
  DeliveredMessage,
  EventBus,
  OutgoingMessage,
  Subscription,
} from './event-bus.port';
import { fnv1a32 } from './fnv1a';

export interface InProcessBusOptions {
  partitions: number;
  maxBatchSize: number;
  /** How long a partial batch waits for more messages before delivery. */
  lingerMs: number;
  /** Publishers wait while a consumer queue holds more than this many messages. */
  highWaterMark: number;
  retryDelayMs: number;
}

const DEFAULTS: InProcessBusOptions = {
  partitions: 4,
  maxBatchSize: 5_000,
  lingerMs: 20,
  highWaterMark: 20_000,
  retryDelayMs: 200,
};

/** FNV-1a, so that a key always lands on the same partition, as Kafka's partitioner does. */
export function partitionOf(key: string, partitions: number): number {
  return fnv1a32(key) % partitions;
}

class PartitionQueue {
  readonly messages: DeliveredMessage[] = [];
  head = 0;
  busy = false;
  timer: NodeJS.Timeout | undefined;

  get length(): number {
    return this.messages.length - this.head;
  }

  take(max: number): DeliveredMessage[] {
    return this.messages.slice(this.head, this.head + max);
  }

  commit(count: number): void {
    this.head += count;
    if (this.head > 10_000 && this.head * 2 > this.messages.length) {
      this.messages.splice(0, this.head);
      this.head = 0;
    }
  }
}

interface Group {
  readonly id: string;
  readonly topics: Set<string>;
  readonly handler: BatchHandler;
  readonly queues: Map<string, PartitionQueue[]>;
  stopped: boolean;
}

/**
 * The embedded event bus: Kafka's semantics (topics, keyed partitions, consumer groups, batches,
 * offsets committed on success, redelivery on failure) inside one process, without durability.
 */
export class InProcessEventBus implements EventBus {
  private readonly options: InProcessBusOptions;
  private readonly groups = new Map<string, Group>();
  private readonly nextOffset = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly spaceWaiters: (() => void)[] = [];
  private closed = false;
  private readonly closing = new AbortController();
  private readonly runId = randomUUID();

  constructor(options: Partial<InProcessBusOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  async publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.closed) {
      throw new Error('event bus closed');
    }
    while (this.fullestQueue() > this.options.highWaterMark) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
    }
    for (const message of messages) {
      const partition = partitionOf(message.key, this.options.partitions);
      const offsetKey = `${topic}/${partition}`;
      const offset = this.nextOffset.get(offsetKey) ?? 0;
      this.nextOffset.set(offsetKey, offset + 1);
      const delivered: DeliveredMessage = { ...message, offset: String(offset) };
      for (const group of this.groups.values()) {
        if (!group.topics.has(topic)) {
          continue;
        }
        const queue = this.queueOf(group, topic, partition);
        queue.messages.push(delivered);
        this.schedule(group, topic, partition, queue);
      }
    }
  }

  async subscribe(groupId: string, topics: readonly string[], handler: BatchHandler): Promise<Subscription> {
    if (this.groups.has(groupId)) {
      throw new Error(`consumer group ${groupId} already subscribed`);
    }
    // Batches are handled in the subscriber's async context, as a Kafka consumer's are, not in
    // that of whichever publisher scheduled them (its logger, its request).
    const group: Group = {
      id: groupId,
      topics: new Set(topics),
      handler: AsyncResource.bind(handler),
      queues: new Map(),
      stopped: false,
    };
    this.groups.set(groupId, group);
    return {
      stop: async () => {
        group.stopped = true;
        this.groups.delete(groupId);
        for (const queues of group.queues.values()) {
          for (const q of queues) {
            clearTimeout(q.timer);
          }
        }
        this.notify();
      },
    };
  }

  pending(): Promise<boolean> {
    return Promise.resolve(!this.isIdle());
  }

  async drain(): Promise<void> {
    if (this.isIdle()) {
      return;
    }
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.closing.abort(new Error('the event bus is closing'));
    for (const group of [...this.groups.values()]) {
      group.stopped = true;
    }
    this.groups.clear();
  }

  private queueOf(group: Group, topic: string, partition: number): PartitionQueue {
    let queues = group.queues.get(topic);
    if (!queues) {
      queues = Array.from({ length: this.options.partitions }, () => new PartitionQueue());
      group.queues.set(topic, queues);
    }
    return queues[partition];
  }

  private schedule(
    group: Group,
    topic: string,
    partition: number,
    queue: PartitionQueue,
    delay?: number,
  ): void {
    if (queue.busy || queue.timer || group.stopped) {
      return;
    }
    const wait = delay ?? (queue.length >= this.options.maxBatchSize ? 0 : this.options.lingerMs);
    queue.timer = setTimeout(() => {
      queue.timer = undefined;
      void this.deliver(group, topic, partition, queue);
    }, wait);
  }

  private async deliver(
    group: Group,
    topic: string,
    partition: number,
    queue: PartitionQueue,
  ): Promise<void> {
    if (group.stopped || queue.length === 0) {
      this.notify();
      return;
    }
    queue.busy = true;
    const messages = queue.take(this.options.maxBatchSize);
    let retry = false;
    try {
      // One process owns every partition: only closing the bus revokes them.
      await group.handler({
        source: `${topic}/${partition}/${this.runId}`,
        topic,
        partition,
        messages,
        signal: this.closing.signal,
      });
      queue.commit(messages.length);
    } catch {
      retry = true;
    } finally {
      queue.busy = false;
    }
    if (queue.length > 0) {
      this.schedule(group, topic, partition, queue, retry ? this.options.retryDelayMs : 0);
    }
    this.notify();
  }

  private fullestQueue(): number {
    let max = 0;
    for (const group of this.groups.values()) {
      for (const queues of group.queues.values()) {
        for (const q of queues) {
          max = Math.max(max, q.length);
        }
      }
    }
    return max;
  }

  private isIdle(): boolean {
    for (const group of this.groups.values()) {
      for (const queues of group.queues.values()) {
        for (const q of queues) {
          if (q.length > 0 || q.busy) {
            return false;
          }
        }
      }
    }
    return true;
  }

  private notify(): void {
    if (this.fullestQueue() <= this.options.highWaterMark) {
      for (const wake of this.spaceWaiters.splice(0)) {
        wake();
      }
    }
    if (this.isIdle()) {
      for (const wake of this.idleWaiters.splice(0)) {
        wake();
      }
    }
  }
}
