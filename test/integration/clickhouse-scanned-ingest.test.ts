import { createClient } from '@clickhouse/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { AdEventScanner, ScannedAdEvent, type AdEvent } from '@app/events';
import { RAW_COLUMNS, type OffsetEvent } from '@app/report-store';
import { STACK, makeEvent, requireOrSkip, testClickHouseStore } from '@app/testing';

const client = createClient({ url: STACK.clickhouseUrl });
const databases: string[] = [];

/** Events of every kind a row is made from, and text the scanner leaves to the parser (escapes). */
function events(run: string): AdEvent[] {
  const kinds: Partial<AdEvent>[] = [
    { type: 'impression', reopen: false, spend_micros: 1700, revenue_micros: 1360 },
    { type: 'impression', reopen: true, spend_micros: 0, revenue_micros: 0 },
    { type: 'impression' },
    { type: 'click', spend_micros: 250_000, revenue_micros: 200_000 },
    { type: 'conversion', attribution: 'post_view', spend_micros: 1, revenue_micros: 999_999_999_999_999 },
    { type: 'conversion', attribution: 'post_click' },
    { type: 'conversion' },
    { type: 'bid', dsp_id: 'dsp-1', price_micros: 2_000_000, bid_status: 'lost', loss_code: 102 },
    { type: 'auction', auction_id: 'a-1' },
    { type: 'win', dsp_id: 'dsp-1', price_micros: 1_500_000 },
  ];
  const texts = ['US', 'Île-de-France', 'iPhone ✓', 'Mail 😀', 'tab\there', 'back\\slash', 'quote "q"', ''];
  return Array.from({ length: 3_000 }, (_, i) =>
    makeEvent({
      ...kinds[i % kinds.length],
      event_id: i % 97 === 0 ? `${run}-é-${i}` : `${run}-${i}`,
      ts: `2026-11-0${1 + (i % 3)}T0${i % 10}:${String(i % 60).padStart(2, '0')}:07.${i % 1000}Z`,
      region: texts[i % texts.length],
      zip: texts[(i + 3) % 4],
      metro: 'm'.repeat(i % 257),
    }),
  );
}

/** Frames of 70 events: the offset of message i. */
const offsetOf = (i: number) => String(1_000 + Math.floor(i / 70));

/** As the ingest hands them: each scanned from its bytes as it is read, the parser for the rest. */
function* scannedEvents(lines: readonly string[], counts: { scanned: number }): Generator<OffsetEvent> {
  const scanner = new AdEventScanner();
  const frame = Buffer.from(lines.join('\n'));
  let start = 0;
  for (const [i, line] of lines.entries()) {
    const end = start + Buffer.byteLength(line);
    if (scanner.scan(frame, start, end)) {
      counts.scanned += 1;
      const scanned = new ScannedAdEvent(scanner, frame, start, end);
      yield { offset: offsetOf(i), scanned, event: scanned.toEvent() };
    } else {
      yield { offset: offsetOf(i), event: JSON.parse(line) as AdEvent };
    }
    start = end + 1;
  }
}

async function rows(database: string): Promise<string> {
  const columns = RAW_COLUMNS.filter((column) => column !== 'source').join(', ');
  const result = await client.query({
    query: `SELECT ${columns} FROM ${database}.events_raw ORDER BY event_id, offset`,
    format: 'TabSeparated',
  });
  return result.text();
}

async function offsets(database: string): Promise<string> {
  const result = await client.query({
    query: `SELECT max(last_offset), sum(events) FROM ${database}.ingested_offsets`,
    format: 'TabSeparated',
  });
  return result.text();
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('rows written from the message bytes', () => {
  afterAll(async () => {
    for (const database of databases) {
      await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    }
    await client.close();
  });

  it('equal, column for column, the rows of the same events parsed as objects, with the same offsets', async () => {
    const run = `adx_test_${process.pid}_${Date.now()}`;
    const lines = events(run).map((event) => JSON.stringify(event));
    const counts = { scanned: 0 };
    const results = [];
    for (const [name, batch] of [
      ['scanned', scannedEvents(lines, counts)],
      ['parsed', lines.map((line, i) => ({ offset: offsetOf(i), event: JSON.parse(line) as AdEvent }))],
    ] as const) {
      const database = `${run}_${name}`;
      databases.push(database);
      const store = testClickHouseStore(database);
      await store.migrate();
      results.push(await store.ingest('topic/0', batch));
      // A redelivery of the same frames: skipped but for the last frame, whose last event (a win)
      // has no row to carry the offset past it, on both paths alike.
      results.push(
        await store.ingest('topic/0', name === 'scanned' ? scannedEvents(lines, { scanned: 0 }) : batch),
      );
      await store.close();
    }
    // Most events went the bytes' way, and the escaped ones the parser's: both paths wrote rows.
    expect(counts.scanned).toBeGreaterThan(lines.length / 2);
    expect(counts.scanned).toBeLessThan(lines.length);
    expect(results.slice(0, 2)).toEqual(results.slice(2));
    expect(results[1]).toEqual({ stored: 60, skipped: lines.length - 60 });
    const [scanned, parsed] = [`${run}_scanned`, `${run}_parsed`];
    expect(await rows(scanned)).toBe(await rows(parsed));
    expect((await rows(scanned)).split('\n').length).toBeGreaterThan(1_000);
    expect(await offsets(scanned)).toBe(await offsets(parsed));
  });
});
