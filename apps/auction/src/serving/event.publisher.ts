import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { EVENT_BUS, TOPIC_BY_TYPE, settledWithin, type EventBus, type OutgoingMessage } from '@app/events';
import { eventPublishFailures, eventsInFlight } from '@app/observability';
import type { EncodedEvent } from '../core/auction-events';

/** How long events wait to be sent together, and how many at most. */
const LINGER_MS = 5;
const MAX_BATCH = 2000;
/** How long shutdown waits for requests in flight (an auction lasts tmax, a native render less). */
const SHUTDOWN_WAIT_MS = 5000;
/**
 * How long shutdown sends batches as usual before it hands all that is left to the bus at once, whose
 * `close()` delivers it or spools it within its own bound: a send waits ~8-15 s on Kafka while a
 * killed broker's partitions fail over (docs/testing.md), longer than a supervisor's patience.
 */
const SHUTDOWN_FLUSH_MS = 5000;

/**
 * Hands the exchange's events to the event bus in small batches per topic, so that an ad request
 * costs a buffer push rather than a bus round trip, and the answer to the viewer never waits for
 * the bus. One batch per topic is in flight at a time: what comes meanwhile waits and goes in the
 * next batch, so that batches grow with the load instead of piling up in the bus's queue (at 400
 * ad requests a second from two workers, a batch every 5 ms per topic left thousands of sends
 * waiting for Kafka's producer locks, which timed out to the spool). `flush()` sends what is
 * buffered and resolves once the bus accepted it. Events buffered here count in
 * `adx_events_in_flight` until handed to the bus, which counts them until Kafka or its spool has them.
 */
@Injectable()
export class EventPublisher implements OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  private buffer = new Map<string, OutgoingMessage[]>();
  private buffered = 0;
  private timer?: NodeJS.Timeout;
  private sending = new Set<Promise<void>>();
  /** Topics with a batch in flight. */
  private readonly busy = new Set<string>();
  /** Requests being served, whose events are still to come. */
  private readonly serving = new Set<Promise<unknown>>();

  constructor(@Inject(EVENT_BUS) private readonly bus: EventBus) {}

  publish(events: readonly EncodedEvent[]): void {
    for (const event of events) {
      const topic = TOPIC_BY_TYPE[event.type];
      const message: OutgoingMessage = { key: event.key, value: event.value };
      const queue = this.buffer.get(topic);
      if (queue) {
        queue.push(message);
      } else {
        this.buffer.set(topic, [message]);
      }
      this.buffered += 1;
    }
    eventsInFlight.inc(events.length);
    if (this.buffered >= MAX_BATCH) {
      this.send();
    } else {
      this.timer ??= setTimeout(() => this.send(), LINGER_MS);
    }
  }

  /**
   * Runs a request whose events are published through here: shutdown waits for it (up to
   * `SHUTDOWN_WAIT_MS`) before the last flush, so that its events are not refused by a closed bus.
   */
  track<T>(work: Promise<T>): Promise<T> {
    this.serving.add(work);
    void work.finally(() => this.serving.delete(work)).catch(() => undefined);
    return work;
  }

  async flush(): Promise<void> {
    while (this.buffered > 0 || this.sending.size > 0) {
      this.send();
      await Promise.all([...this.sending]);
    }
  }

  /**
   * Waits for the requests being served (up to `SHUTDOWN_WAIT_MS`), flushes for up to
   * `SHUTDOWN_FLUSH_MS`, then hands what is still buffered to the bus at once without waiting: the
   * bus's `close()`, which comes next, delivers it or spools it, in bounded time either way.
   */
  async onApplicationShutdown(): Promise<void> {
    await settledWithin(Promise.allSettled([...this.serving]), SHUTDOWN_WAIT_MS);
    if (!(await settledWithin(this.flush(), SHUTDOWN_FLUSH_MS))) {
      const left = this.buffered;
      this.send(true);
      this.logger.warn(
        `the event bus has not taken every batch after ${SHUTDOWN_FLUSH_MS} ms: ${left} buffered event(s) ` +
          'handed to it at once, for its close to deliver or spool',
      );
    }
  }

  /** Hands each topic's buffer to the bus: a topic with a batch out waits for it, unless `all`. */
  private send(all = false): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const [topic, messages] of this.buffer) {
      if (this.busy.has(topic) && !all) {
        continue;
      }
      this.buffer.delete(topic);
      this.buffered -= messages.length;
      // Counted by the bus from here (a Kafka bus until its replicas or its spool have them).
      eventsInFlight.dec(messages.length);
      this.busy.add(topic);
      const sent = this.bus
        .publish(topic, messages)
        .catch((error: unknown) => {
          eventPublishFailures.inc(messages.length);
          this.logger.error(
            `${messages.length} event(s) of ${topic} not accepted: ${(error as Error).message}`,
          );
        })
        .finally(() => {
          this.sending.delete(sent);
          this.busy.delete(topic);
          // What came while this batch was in flight goes now, as one batch.
          if (this.buffer.has(topic)) {
            this.send();
          }
        });
      this.sending.add(sent);
    }
  }
}
