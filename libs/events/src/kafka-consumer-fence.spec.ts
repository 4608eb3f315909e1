import { EventEmitter } from 'node:events';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  type Consumer,
  type EachBatchPayload,
} from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsumerFence, membershipLost } from './kafka-consumer-fence';

const TIMINGS = { sessionTimeout: 3_000, heartbeatInterval: 1_000, rebalanceTimeout: 6_000 };
const EVENTS = { GROUP_JOIN: 'join', HEARTBEAT: 'heartbeat', REBALANCING: 'rebalancing', CRASH: 'crash' };

/** The kafkajs consumer as the fence sees it: its instrumentation events. */
function fakeConsumer() {
  const emitter = new EventEmitter();
  const consumer = { events: EVENTS, on: emitter.on.bind(emitter) } as unknown as Consumer;
  return { consumer, emit: (event: keyof typeof EVENTS) => emitter.emit(EVENTS[event]) };
}

/** A batch payload whose heartbeat answers as `answer` says and counts its calls. */
function payload(answer: () => Promise<void>) {
  const heartbeat = vi.fn(answer);
  return { payload: { heartbeat } as unknown as EachBatchPayload, heartbeat };
}

describe('ConsumerFence', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('heartbeats while a handler runs longer than the session, and stops when it ends', async () => {
    const { consumer, emit } = fakeConsumer();
    const fence = new ConsumerFence(consumer, TIMINGS);
    emit('GROUP_JOIN');
    const { payload: p, heartbeat } = payload(async () => void emit('HEARTBEAT'));
    const run = fence.run(p, (signal) => vi.advanceTimersByTimeAsync(10_000).then(() => void signal));
    expect(await run).toBe(false);
    expect(fence.owns()).toBe(true);
    expect(heartbeat.mock.calls.length).toBeGreaterThanOrEqual(10);
    const calls = heartbeat.mock.calls.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(heartbeat.mock.calls.length).toBe(calls);
  });

  it('aborts the running batches when a heartbeat says the group rebalances, and starts none until rejoined', async () => {
    const { consumer, emit } = fakeConsumer();
    const fence = new ConsumerFence(consumer, TIMINGS);
    emit('GROUP_JOIN');
    const rebalancing = Object.assign(new Error('rebalancing'), { type: 'REBALANCE_IN_PROGRESS' });
    const { payload: p } = payload(() => Promise.reject(rebalancing));
    let abortedWith: unknown;
    const run = fence.run(p, async (signal) => {
      await vi.advanceTimersByTimeAsync(500);
      abortedWith = signal.reason;
      // A store that honours the signal rejects; the fence swallows it for an aborted batch.
      signal.throwIfAborted();
    });
    expect(await run).toBe(true);
    expect(abortedWith).toBe(rebalancing);
    expect(fence.owns()).toBe(false);
    emit('GROUP_JOIN');
    expect(fence.owns()).toBe(true);
  });

  it('aborts when no heartbeat succeeded within the session, without giving up the membership', async () => {
    const { consumer, emit } = fakeConsumer();
    const fence = new ConsumerFence(consumer, TIMINGS);
    emit('GROUP_JOIN');
    // A coordinator that does not answer: the heartbeat hangs.
    const { payload: p } = payload(() => new Promise<void>(() => undefined));
    const abortedAt: number[] = [];
    const start = Date.now();
    const run = fence.run(p, async (signal) => {
      signal.addEventListener('abort', () => abortedAt.push(Date.now() - start));
      await vi.advanceTimersByTimeAsync(5_000);
    });
    expect(await run).toBe(true);
    expect(abortedAt[0]).toBeLessThanOrEqual(TIMINGS.sessionTimeout - TIMINGS.heartbeatInterval + 250);
    expect(fence.owns()).toBe(false);
    emit('HEARTBEAT');
    expect(fence.owns()).toBe(true);
  });

  it('passes on a handler failure of a batch that was not aborted', async () => {
    const { consumer, emit } = fakeConsumer();
    const fence = new ConsumerFence(consumer, TIMINGS);
    emit('GROUP_JOIN');
    const { payload: p } = payload(async () => undefined);
    await expect(fence.run(p, () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
  });

  it('aborts running batches and refuses new ones once the bus closes', async () => {
    const { consumer, emit } = fakeConsumer();
    const fence = new ConsumerFence(consumer, TIMINGS);
    emit('GROUP_JOIN');
    const { payload: p } = payload(async () => void emit('HEARTBEAT'));
    const run = fence.run(p, async () => {
      fence.close();
    });
    expect(await run).toBe(true);
    expect(fence.owns()).toBe(false);
  });
});

describe('membershipLost', () => {
  const protocolError = (type: string, retriable: boolean) =>
    new KafkaJSProtocolError({ type, code: 0, retriable, message: type } as unknown as Error);

  it('knows an UNKNOWN_MEMBER_ID that kafkajs wrapped as not retriable (a commit after the coordinator moved)', () => {
    const cause = protocolError('UNKNOWN_MEMBER_ID', false);
    // As kafkajs's retrier wraps it (its types leave out the constructor's cause).
    expect(membershipLost(Object.assign(new KafkaJSNonRetriableError(cause), { cause }))).toBe(true);
    expect(membershipLost(cause)).toBe(true);
  });

  it('knows a rebalance and a stale generation, bare or wrapped', () => {
    for (const type of ['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'NOT_COORDINATOR_FOR_GROUP']) {
      const cause = protocolError(type, true);
      expect(membershipLost(cause)).toBe(true);
      expect(membershipLost(new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 3, retryTime: 1 }))).toBe(
        true,
      );
    }
  });

  it('leaves other failures to the caller', () => {
    expect(membershipLost(protocolError('OFFSET_METADATA_TOO_LARGE', false))).toBe(false);
    expect(membershipLost(new KafkaJSConnectionError('connect ECONNREFUSED'))).toBe(false);
    expect(membershipLost(new Error('UNKNOWN_MEMBER_ID'))).toBe(false);
    expect(membershipLost(undefined)).toBe(false);
  });
});
