import { createClient } from '@clickhouse/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { OffsetEvent } from '@app/report-store';
import { STACK, makeEvent, requireOrSkip, testClickHouseStore } from '@app/testing';

const client = createClient({ url: STACK.clickhouseUrl });
const databases: string[] = [];

/** Enough rows for many chunks of the streamed INSERT to reach ClickHouse before the cut. */
const EVENTS = 30_000;
// Not a divisor of the INSERT's chunk (2,000 rows): a chunk, and so what lands, can end inside a frame.
const PER_FRAME = 70;
const DAY = '2026-11-01';

function framedEvents(run: string): OffsetEvent[] {
  return Array.from({ length: EVENTS }, (_, i) => ({
    offset: String(Math.floor(i / PER_FRAME)),
    event: makeEvent({ type: 'impression', event_id: `${run}-${i}`, ts: `${DAY}T10:00:00.000Z` }),
  }));
}

async function value(query: string): Promise<string> {
  const result = await client.query({ query, format: 'TabSeparated' });
  return (await result.text()).trim();
}

/** Waits until no INSERT into `database` runs and its raw row count stays put. */
async function settled(database: string): Promise<number> {
  let last = -1;
  for (let tries = 0; tries < 100; tries += 1) {
    // Anchored: this query's own text does not match. Others' inserts only make it wait longer.
    const running = Number(
      await value(`SELECT count() FROM system.processes WHERE query LIKE 'INSERT INTO events_raw%'`),
    );
    const rows = Number(await value(`SELECT count() FROM ${database}.events_raw`));
    if (running === 0 && rows === last) {
      return rows;
    }
    last = rows;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`inserts into ${database} did not settle`);
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('a streamed INSERT of frames cut off half-way', () => {
  afterAll(async () => {
    for (const database of databases) {
      await client.command({ query: `DROP DATABASE IF EXISTS ${database}` });
    }
    await client.close();
  });

  it.each([
    [
      'the caller aborts (a lost partition)',
      (controller: AbortController) => () => controller.abort(new Error('partition lost')),
    ],
    [
      'the events stop with an error (a parser that throws)',
      () => () => {
        throw new Error('parser failed');
      },
    ],
  ])(
    'when %s: what landed is whole frames plus a prefix, the offset never passes a part, the retry and the seal count every event once',
    async (_, cut) => {
      const database = `adx_test_${process.pid}_${Date.now()}_stream`;
      databases.push(database);
      const store = testClickHouseStore(database);
      await store.migrate();
      const source = 'stream/0';
      const batch = framedEvents(database);
      const controller = new AbortController();
      const cutOff = cut(controller);
      let read = 0;
      function* cutHalfWay(): Generator<OffsetEvent> {
        for (const event of batch) {
          read += 1;
          if (read === EVENTS / 2 + PER_FRAME / 2) {
            cutOff(); // in the middle of a frame
          }
          yield event;
        }
      }
      await expect(store.ingest(source, cutHalfWay(), { signal: controller.signal })).rejects.toThrow();

      // ClickHouse may keep what it received up to the last whole line (it takes the dropped
      // body for its end): whatever landed is a prefix of the batch...
      const landed = await settled(database);
      expect(landed).toBeLessThan(EVENTS);
      const ids = await value(
        `SELECT arrayStringConcat(arraySort(groupArray(event_id)), ',') FROM ${database}.events_raw`,
      );
      const prefix = batch.slice(0, landed).map((e) => e.event.event_id);
      expect(ids).toBe([...prefix].sort().join(','));
      // ...and the offset recorded is that of the first frame not wholly stored.
      const recorded = Number(await value(`SELECT max(last_offset) FROM ${database}.ingested_offsets`));
      expect(recorded).toBe(Math.floor(landed / PER_FRAME));

      const retry = await store.ingest(source, batch);
      expect(retry).toEqual({ stored: EVENTS - recorded * PER_FRAME, skipped: recorded * PER_FRAME });
      await store.seal(new Date('2026-11-03T00:00:00.000Z'));
      const [row] = await store.query({
        range: { start: DAY, end: DAY },
        split: 'day',
        filters: [],
        scope: {},
        tier: 'exact',
      });
      expect(row.measures.unique_impressions).toBe(EVENTS);
      await store.close();
    },
  );
});
