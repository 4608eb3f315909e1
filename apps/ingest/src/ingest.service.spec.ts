import type { KafkaMessage } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { Random } from '@app/demo-traffic';
import {
  DEAD_LETTER_TOPIC,
  FRAME_HEADER,
  FRAME_KEYS_HEADER,
  InProcessEventBus,
  parseAdEvent,
  unframe,
  type DeliveredMessage,
} from '@app/events';
import { addMeasures, emptyMeasures } from '@app/report-model';
import { isReportable, measuresOf, openReportStore, type ReportStore } from '@app/report-store';
import { makeEvent } from '@app/testing';
import { IngestService } from './ingest.service';

/** The demo traffic's seeded generator (mulberry32): a failure repeats with its seed. */
function random(seed: number): () => number {
  const generator = new Random(seed);
  return () => generator.next();
}

/** An event's JSON, damaged one way or another about half the time (never with a newline: it stays one line). */
function line(i: number, next: () => number): string {
  const event = makeEvent({
    event_id: `fuzz-${i}`,
    type: (['impression', 'click', 'conversion', 'bid'] as const)[i % 4],
    spend_micros: i,
    revenue_micros: i % 7,
    region: next() < 0.1 ? 'Île ✓' : 'IL',
  });
  const text = JSON.stringify(event);
  const at = Math.floor(next() * text.length);
  switch (Math.floor(next() * 8)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return `${text.slice(0, at)}${String.fromCharCode(Math.floor(next() * 0x7f) || 1)}${text.slice(at + 1)}`;
    case 2:
      return text.replace(
        `"spend_micros":${i}`,
        `"spend_micros":${['-1', '1.5', '"1"', 'null', '1e2'][i % 5]}`,
      );
    case 3:
      return text.replace('"ts":"2026-11-01T10:00:00.000Z"', `"ts":"2026-02-${29 + (i % 3)}T10:00:00Z"`);
    default:
      return text;
  }
}

/** The messages of one Kafka frame holding `lines`, as the bus delivers them (with their bytes). */
function framed(lines: readonly string[], offset: number): DeliveredMessage[] {
  const record: KafkaMessage = {
    key: null,
    value: Buffer.from(lines.join('\n').replaceAll('\r', ' ')),
    offset: String(offset),
    timestamp: '0',
    attributes: 0,
    headers: {
      [FRAME_HEADER]: Buffer.from('1'),
      [FRAME_KEYS_HEADER]: Buffer.from(lines.map((_, i) => `slot-${i % 3}`).join('\n')),
    },
  };
  const out: DeliveredMessage[] = [];
  unframe(record, out);
  return out;
}

describe('IngestService on frames of damaged events', () => {
  let store: ReportStore | undefined;
  afterEach(async () => {
    await store?.close();
  });

  it('stores exactly the events parseAdEvent accepts and dead-letters every other with its reason (3,000 events)', async () => {
    store = await openReportStore({
      kind: 'duckdb',
      path: ':memory:',
      sampleDenominator: 10,
      queryTimeoutMs: 10_000,
      rawRetentionMonths: 120,
    });
    const bus = new InProcessEventBus();
    const deadLetters: DeliveredMessage[] = [];
    await bus.subscribe(
      'dead',
      [DEAD_LETTER_TOPIC],
      async (batch) => void deadLetters.push(...batch.messages),
    );
    const ingest = new IngestService(bus, store);
    const next = random(20);
    const lines = Array.from({ length: 3_000 }, (_, i) => line(i, next));
    const messages = Array.from({ length: 30 }, (_, frame) =>
      framed(lines.slice(frame * 100, frame * 100 + 100), frame),
    ).flat();
    expect(messages.every((m) => m.bytes !== undefined)).toBe(true);
    await ingest.handle({
      source: 'adx.impression/0',
      topic: 'adx.impression',
      partition: 0,
      messages,
      signal: new AbortController().signal,
    });
    await bus.drain();

    const verdicts = messages.map((m) => parseAdEvent(m.value));
    expect(verdicts.filter((verdict) => !verdict.ok).length).toBeGreaterThan(500);
    // The dead-letter topic's partitions deliver in their own order: compared as sets.
    const byValue = (a: string[], b: string[]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    expect(deadLetters.map((m) => [m.value, m.headers?.reason ?? '']).sort(byValue)).toEqual(
      messages
        .flatMap((m, i) => (verdicts[i].ok ? [] : [[m.value, (verdicts[i] as { reason: string }).reason]]))
        .sort(byValue),
    );
    const expected = emptyMeasures();
    for (const verdict of verdicts) {
      if (verdict.ok && isReportable(verdict.event)) {
        addMeasures(expected, measuresOf(verdict.event));
      }
    }
    const [totals] = await store.query({
      range: { start: '2026-01-01', end: '2026-11-21' },
      filters: [],
      scope: {},
      tier: 'exact',
    });
    expect(totals.measures).toEqual(expected);
    await bus.close();
  });
});
