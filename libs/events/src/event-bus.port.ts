import type { AdEvent } from './event.schema';

export const EVENT_BUS = Symbol('EVENT_BUS');

export interface OutgoingMessage {
  /** Partitioning key: the ad slot id for ad events. */
  readonly key: string;
  readonly value: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface DeliveredMessage extends OutgoingMessage {
  readonly offset: string;
  /**
   * The value's UTF-8 bytes, `bytes[start, end)`, when the bus holds them (Kafka): a consumer may
   * read them without making `value`, a string decoded only when asked for.
   */
  readonly bytes?: Uint8Array;
  readonly start?: number;
  readonly end?: number;
}

export interface DeliveredBatch {
  /**
   * Where the offsets of this batch count from: `topic/partition` on Kafka, where offsets are
   * durable; the in-process bus adds its run id, as its offsets restart with the process.
   */
  readonly source: string;
  readonly topic: string;
  readonly partition: number;
  readonly messages: readonly DeliveredMessage[];
  /**
   * Aborted when this consumer may no longer own the partition (another may already be reading
   * the batch from the last committed offset) or the bus is closing. A handler must not start a
   * write after it is aborted, and should pass it to its writes so that one in flight is
   * cancelled; an aborted batch is never committed, whatever the handler does.
   */
  readonly signal: AbortSignal;
}

/**
 * Handles one batch. Resolving commits the batch's offsets; rejecting redelivers the same batch
 * later (at-least-once), so handlers must be idempotent per batch.
 */
export type BatchHandler = (batch: DeliveredBatch) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
}

export interface EventBus {
  /** Resolves once the bus has accepted the messages (durably, for a distributed bus). */
  publish(topic: string, messages: readonly OutgoingMessage[]): Promise<void>;
  subscribe(groupId: string, topics: readonly string[], handler: BatchHandler): Promise<Subscription>;
  /** Resolves when every message published so far has been handled by every subscriber. */
  drain(): Promise<void>;
  /**
   * Whether messages wait for this bus's subscribers: published and not yet handled (in process),
   * or past the committed offsets of its groups (Kafka). Rejects when the bus cannot tell.
   */
  pending(): Promise<boolean>;
  close(): Promise<void>;
}

/** A batch's source and offset range, for logs. */
export function describeBatch(batch: DeliveredBatch): string {
  const first = batch.messages[0]?.offset ?? '-';
  const last = batch.messages[batch.messages.length - 1]?.offset ?? '-';
  return `${batch.source}@${first}-${last}`;
}

/** Ad events are keyed by ad slot, so that one slot's events stay in order on one partition. */
export function toMessage(event: AdEvent): OutgoingMessage {
  return { key: event.ad_slot_id, value: JSON.stringify(event) };
}
