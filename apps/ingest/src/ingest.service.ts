import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  AdEventScanner,
  DEAD_LETTER_TOPIC,
  EVENT_BUS,
  ScannedAdEvent,
  describeBatch,
  frameEnd,
  parseAdEvent,
  type AdEvent,
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
import { REPORT_STORE, type IngestResult, type OffsetEvent, type ReportStore } from '@app/report-store';
import { IngestProgress } from './ingest-progress';
import { INGEST_RETRY_MAX_MS } from './ingest.tokens';

/**
 * The most events one INSERT carries (but for the rest of a frame); a larger batch is stored in
 * blocks. ClickHouse's cost per event falls with the block (parts written, views run, merges).
 */
const MAX_EVENTS_PER_INSERT = 50_000;

/** The first pause before a refused block is tried again; each further try waits twice as long. */
const FIRST_RETRY_MS = 250;

/**
 * Stores event batches. A message that does not parse or validate goes to the dead-letter topic
 * with its reason and never blocks its partition; the valid rest is stored with the source's
 * offsets, so a redelivered batch changes nothing. A block the store refuses (ClickHouse down, a
 * view that throws) is tried again here, after a pause that doubles up to `retryMaxMs`, for as
 * long as this consumer owns the partition: the batch is never handed back to the consumer for a
 * store failure (kafkajs then stopped fetching altogether, all partitions, while the process lived:
 * docs/exactness.md), only when its signal is aborted.
 */
@Injectable()
export class IngestService {
  private readonly logger = new Logger('Ingest');
  private readonly scanner = new AdEventScanner();

  constructor(
    @Inject(EVENT_BUS) private readonly bus: EventBus,
    @Inject(REPORT_STORE) private readonly store: ReportStore,
    @Optional() private readonly progress: IngestProgress = new IngestProgress(),
    @Optional() @Inject(INGEST_RETRY_MAX_MS) private readonly retryMaxMs: number = 5_000,
  ) {}

  async handle(batch: DeliveredBatch): Promise<void> {
    const rejected: OutgoingMessage[] = [];
    let stored = 0;
    try {
      // In offset order, each block with its offset: a block stored stays stored when a later one fails, so a
      // large batch (tens of thousands of events) that keeps being cut off (a slow store, a lost partition)
      // still moves forward instead of starting over every time. A block ends at a frame's end (its events
      // share one offset), and is parsed as the store reads it (ClickHouse: as the INSERT streams): parsing a
      // whole fetch at once held the event loop long enough for the consumer's heartbeats to miss the fence's
      // lease (bench/journal/pipeline.md, "frames, streamed inserts"), and kept every parsed event alive
      // until the insert.
      let from = 0;
      do {
        batch.signal.throwIfAborted();
        const end = frameEnd(batch.messages, from, MAX_EVENTS_PER_INSERT);
        const result = await this.storeBlock(batch, from, end, rejected);
        stored += result.stored;
        ingestedEvents.inc({ topic: batch.topic }, result.stored);
        if (result.skipped > 0) {
          replayedEvents.inc(result.skipped);
        }
        from = end;
      } while (from < batch.messages.length);
      ingestBatchEvents.set(stored);
    } catch (error) {
      ingestFailures.inc();
      // The fence's reason says why a batch was cut off (the store only sees "aborted").
      const why = batch.signal.aborted ? (batch.signal.reason as Error) : (error as Error);
      this.logger.error(`batch ${describeBatch(batch)} not stored, will be redelivered: ${why.message}`);
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

  /** Stores `messages[from, end)`, trying again after each refusal until stored or aborted. */
  private async storeBlock(
    batch: DeliveredBatch,
    from: number,
    end: number,
    rejected: OutgoingMessage[],
  ): Promise<IngestResult> {
    for (let attempt = 1; ; attempt += 1) {
      const rejectedBefore = rejected.length;
      try {
        const result = await this.store.ingest(batch.source, this.parse(batch, from, end, rejected), {
          signal: batch.signal,
        });
        this.progress.stored();
        return result;
      } catch (error) {
        // The try parses the block again: its rejects are counted once.
        rejected.length = rejectedBefore;
        if (batch.signal.aborted) {
          throw error;
        }
        this.progress.failed();
        const pause = Math.min(FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 30), this.retryMaxMs);
        this.logger.warn(
          `events ${describeBatch(batch)} from ${batch.messages[from]?.offset ?? '-'} not stored (try ${attempt}), ` +
            `trying again in ${pause} ms: ${(error as Error).message}`,
        );
        await sleep(pause, undefined, { signal: batch.signal });
      }
    }
  }

  /**
   * The valid events of `messages[from, end)`, validated as they are read; the others go to
   * `rejected`. A message whose bytes the bus holds (Kafka) is scanned in them, and most events
   * are found valid there without being parsed (`AdEventScanner`); the scanner leaves the rest to
   * `parseAdEvent`, which decides as it always did.
   */
  private *parse(
    batch: DeliveredBatch,
    from: number,
    end: number,
    rejected: OutgoingMessage[],
  ): Generator<OffsetEvent, void, undefined> {
    const scanner = this.scanner;
    for (let i = from; i < end; i += 1) {
      const message = batch.messages[i];
      const { bytes, start, end: stop } = message;
      if (
        bytes !== undefined &&
        start !== undefined &&
        stop !== undefined &&
        scanner.scan(bytes, start, stop)
      ) {
        yield new ScannedOffsetEvent(message.offset, scanner, bytes, start, stop);
        continue;
      }
      const parsed = parseAdEvent(message.value);
      if (parsed.ok) {
        yield { offset: message.offset, event: parsed.event };
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
  }
}

/**
 * An event found valid in its message's bytes, with its offset (one object an event: the ingest
 * makes one per message); parsed into an object only if a store reads `event`.
 */
class ScannedOffsetEvent extends ScannedAdEvent implements OffsetEvent {
  private parsed: AdEvent | undefined;

  constructor(
    readonly offset: string,
    scanner: AdEventScanner,
    bytes: Uint8Array,
    start: number,
    end: number,
  ) {
    super(scanner, bytes, start, end);
  }

  get scanned(): ScannedAdEvent {
    return this;
  }

  get event(): AdEvent {
    this.parsed ??= this.toEvent();
    return this.parsed;
  }
}
