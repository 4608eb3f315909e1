import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  DEAD_LETTER_TOPIC,
  EVENT_BUS,
  describeBatch,
  parseAdEvent,
  type DeliveredBatch,
  type EventBus,
  type OutgoingMessage,
} from '@app/events';
import {
  deadLetters,
  ingestBatchEvents,
  ingestFailures,
  ingestedEvents,
  replayedEvents,
} from '@app/observability';
import { REPORT_STORE, type OffsetEvent, type ReportStore } from '@app/report-store';

/** The most events one INSERT carries; a larger batch is stored in parts. */
const MAX_EVENTS_PER_INSERT = 10_000;

/**
 * Stores event batches. A message that does not parse or validate goes to the dead-letter topic
 * with its reason and never blocks its partition; the valid rest is stored with the source's
 * offsets, so a redelivered batch changes nothing.
 */
@Injectable()
export class IngestService {
  private readonly logger = new Logger('Ingest');

  constructor(
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(REPORT_STORE) private readonly store: ReportStore,
  ) {}

  async handle(batch: DeliveredBatch): Promise<void> {
    const events: OffsetEvent[] = [];
    const rejected: OutgoingMessage[] = [];
    for (const message of batch.messages) {
      const parsed = parseAdEvent(message.value);
      if (parsed.ok) {
        events.push({ offset: message.offset, event: parsed.event });
      } else {
        rejected.push({
          key: message.key,
          value: message.value,
          headers: {
            reason: parsed.reason,
            source: `${batch.topic}/${batch.partition}/${message.offset}`,
          },
        });
      }
    }
    let stored = 0;
    try {
      // In offset order, each part with its offset: a part stored stays stored when a later one
      // fails, so a batch of 90,000 events that keeps being cut off (a slow store, a lost
      // partition) still moves forward instead of starting over every time.
      for (let from = 0; from < events.length || from === 0; from += MAX_EVENTS_PER_INSERT) {
        batch.signal.throwIfAborted();
        const result = await this.store.ingest(
          batch.source,
          events.slice(from, from + MAX_EVENTS_PER_INSERT),
          {
            signal: batch.signal,
          },
        );
        stored += result.stored;
        ingestedEvents.inc({ topic: batch.topic }, result.stored);
        if (result.skipped > 0) {
          replayedEvents.inc(result.skipped);
        }
      }
      ingestBatchEvents.set(stored);
    } catch (error) {
      ingestFailures.inc();
      this.logger.error(
        `batch ${describeBatch(batch)} not stored, will be redelivered: ${(error as Error).message}`,
      );
      throw error;
    }
    // After the store, so that a batch redelivered because the store failed does not send its
    // rejects again; a crash between the two sends them again (headers name their source).
    if (rejected.length > 0) {
      await this.bus.publish(DEAD_LETTER_TOPIC, rejected);
      deadLetters.inc({ topic: batch.topic }, rejected.length);
      this.logger.warn(
        `${rejected.length} message(s) of ${batch.topic}/${batch.partition} sent to ${DEAD_LETTER_TOPIC}`,
      );
    }
  }
}
