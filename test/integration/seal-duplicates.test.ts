import { createClient } from '@clickhouse/client';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import type { AdEvent } from '@app/events';
import { emptyMeasures, type Measures } from '@app/report-model';
import {
  STACK,
  clickHouseLines,
  expectedBySplit,
  makeEvent,
  requireOrSkip,
  testClickHouseStore,
} from '@app/testing';

/**
 * How the sealer reads a closed day holding duplicate event ids: the duplicated ids alone one row
 * per id, the rest plainly; a day with more duplicated ids than the sealer lists, with FINAL; a
 * clean day, plainly. Each tier (cube, sample, rollup) is compared with a hand count of the
 * distinct events, per day and ad slot, and the sealer's recompute queries are looked at to tell
 * which way each day was read.
 */

/** Every day of the events is closed then. */
const AFTER_THE_EVENTS = new Date('2026-11-22T12:00:00.000Z');
const CLEAN_DAY = '2026-11-18';
const DUPLICATED_DAY = '2026-11-19';
const MANY_DUPLICATES_DAY = '2026-11-20';
/** One past the most duplicated ids the sealer lists in its queries (MAX_LISTED_DUPLICATES). */
const MANY_DUPLICATES = 4_097;
const SLOTS = ['slot-1-1-1', 'slot-1-1-2', 'slot-2-1-1'];

/** Impressions, clicks and conversions of the day, spread over hours and ad slots. */
function eventsOf(day: string, count: number): AdEvent[] {
  return Array.from({ length: count }, (_, i) =>
    makeEvent({
      ts: `${day}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00.000Z`,
      type: (['impression', 'impression', 'click', 'conversion'] as const)[i % 4],
      ...(i % 8 === 3 ? { attribution: 'post_view' as const } : {}),
      ...(i % 8 === 1 ? { reopen: true } : {}),
      ad_slot_id: SLOTS[i % SLOTS.length],
      country: ['US', 'FR', 'DE'][(i % 5) % 3],
      spend_micros: 1_000 + i,
      revenue_micros: 700 + i,
    }),
  );
}

/** Every measure summed, in the order of emptyMeasures(). */
const SUMS_SQL = Object.keys(emptyMeasures())
  .map((m) => `toString(sum(${m}))`)
  .join(', ');

/** The rows of a SELECT, each split into its fields. */
const lines = async (sql: string): Promise<string[][]> =>
  (await clickHouseLines(sql)).map((line) => line.split('\t'));

function measuresOf(values: readonly string[]): Measures {
  const measures = emptyMeasures();
  (Object.keys(measures) as (keyof Measures)[]).forEach((m, i) => {
    measures[m] = Number(values[i]);
  });
  return measures;
}

/** Day, then ad slot, then measures: the cube or the sample as stored (marker rows left out). */
async function perSlot(database: string, table: string): Promise<Record<string, Record<string, Measures>>> {
  const out: Record<string, Record<string, Measures>> = {};
  for (const [day, slot, ...values] of await lines(
    `SELECT toString(day), ad_slot_id, ${SUMS_SQL} FROM ${database}.${table}
     WHERE ad_slot_id != '' GROUP BY day, ad_slot_id`,
  )) {
    (out[day] ??= {})[slot] = measuresOf(values);
  }
  return out;
}

/** Day, then measures: the rollup's country dimension, which every sampled event adds to once. */
async function rollupPerDay(database: string): Promise<Record<string, Measures>> {
  const rows = await lines(
    `SELECT toString(day), ${SUMS_SQL} FROM ${database}.inexact_daily WHERE dimension = 'country' GROUP BY day`,
  );
  return Object.fromEntries(rows.map(([day, ...values]) => [day, measuresOf(values)]));
}

function handCount(events: readonly AdEvent[]): {
  perSlot: Record<string, Record<string, Measures>>;
  perDay: Record<string, Measures>;
} {
  const once = [...new Map(events.map((e) => [e.event_id, e])).values()];
  const days = [...new Set(once.map((e) => e.ts.slice(0, 10)))];
  const ofDay = (day: string) => once.filter((e) => e.ts.startsWith(day));
  return {
    perSlot: Object.fromEntries(
      days.map((day) => [day, Object.fromEntries(expectedBySplit(ofDay(day), 'ad_slot_id'))]),
    ),
    perDay: Object.fromEntries(days.flatMap((day) => [...expectedBySplit(ofDay(day), 'day')])),
  };
}

describe.runIf(
  requireOrSkip(inject('stack').clickhouse, `ClickHouse at ${STACK.clickhouseUrl} (npm run stack:up)`),
)('sealing closed days that hold duplicate event ids (ClickHouse)', () => {
  const probe = createClient({ url: STACK.clickhouseUrl });
  // Every client's commands, the sealer's recompute (`INSERT INTO seal_...`) among them.
  const commands = vi.spyOn(Object.getPrototypeOf(probe) as typeof probe, 'command');
  afterAll(async () => {
    commands.mockRestore();
    await probe.close();
  });

  /** The recomputes of a day (`INSERT INTO <staging> (...) SELECT`), one per tier. */
  const recomputesOf = (day: string) =>
    commands.mock.calls
      .map(([params]) => params.query)
      .filter((q) => /^INSERT INTO seal_\w+ \([^)]*\) SELECT /.test(q) && q.includes(`toDate('${day}')`));

  it('every tier counts each event once: duplicated ids read one per id, the rest plainly', async () => {
    const database = `adx_test_${process.pid}_${Date.now()}_seal_duplicates`;
    // Every event in the sample with weight 1: the inexact tiers then match the hand count too.
    const store = testClickHouseStore(database, { sampleDenominator: 1 });
    await store.migrate();
    const clean = eventsOf(CLEAN_DAY, 200);
    const duplicated = eventsOf(DUPLICATED_DAY, 200);
    const many = eventsOf(MANY_DUPLICATES_DAY, MANY_DUPLICATES + 100);
    // Delivered again by producer retries, in INSERTs of their own: two ids twice in one ad slot,
    // two twice in another, one three times in a third; impressions, clicks and a conversion.
    const twice = [duplicated[0], duplicated[3], duplicated[4], duplicated[10]];
    const thrice = duplicated[2];
    expect(new Set([...twice, thrice].map((e) => e.ad_slot_id)).size).toBe(SLOTS.length);
    const deliveries: Record<string, readonly AdEvent[]> = {
      'test/0': [...clean, ...duplicated, ...many],
      'test/retry': [...twice, thrice, ...many.slice(0, MANY_DUPLICATES)],
      'test/retry-again': [thrice],
    };
    for (const [source, events] of Object.entries(deliveries)) {
      await store.ingest(
        source,
        events.map((event, i) => ({ offset: String(i), event })),
      );
    }
    const [[rawRows]] = await lines(`SELECT count() FROM ${database}.events_raw`);
    expect(Number(rawRows)).toBe(Object.values(deliveries).flat().length);

    commands.mockClear();
    const sealed = await store.seal(AFTER_THE_EVENTS);
    expect(sealed.sealed).toEqual([CLEAN_DAY, DUPLICATED_DAY, MANY_DUPLICATES_DAY]);

    const expected = handCount(Object.values(deliveries).flat());
    expect(Object.keys(expected.perSlot[DUPLICATED_DAY])).toHaveLength(SLOTS.length);
    expect(await perSlot(database, 'exact_daily')).toEqual(expected.perSlot);
    expect(await perSlot(database, 'inexact_sample')).toEqual(expected.perSlot);
    expect(await rollupPerDay(database)).toEqual(expected.perDay);

    // The clean day read plainly, the day of 5 duplicated ids with those 5 listed (as hashes)
    // apart, the day of more than the sealer lists with FINAL; each for all 3 tiers.
    const cleanReads = recomputesOf(CLEAN_DAY);
    expect(cleanReads).toHaveLength(3);
    for (const query of cleanReads) {
      expect(query).toMatch(/FROM events_raw (WHERE|ARRAY JOIN)/);
      expect(query).not.toMatch(/FINAL|cityHash64|UNION ALL/);
    }
    const duplicatedReads = recomputesOf(DUPLICATED_DAY);
    expect(duplicatedReads).toHaveLength(3);
    for (const query of duplicatedReads) {
      const [, listed] = /cityHash64\(event_id\) NOT IN \(([^)]*)\)/.exec(query) ?? [];
      expect(listed?.split(', ')).toHaveLength(5);
      expect(query).toContain('UNION ALL');
      expect(query).not.toContain('FINAL');
    }
    const manyReads = recomputesOf(MANY_DUPLICATES_DAY);
    expect(manyReads).toHaveLength(3);
    for (const query of manyReads) {
      expect(query).toMatch(/FROM events_raw FINAL (WHERE|ARRAY JOIN)/);
    }

    // Final: no live rows left, and the next pass has nothing to do.
    for (const table of ['exact_daily', 'inexact_sample', 'inexact_daily']) {
      expect(await lines(`SELECT toString(sum(live_rows)) FROM ${database}.${table}`)).toEqual([['0']]);
    }
    expect(await store.seal(AFTER_THE_EVENTS)).toEqual({ sealed: [], final: 3 });

    // A late copy of an event of the clean day brings it back, and it is read the new way.
    await store.ingest('test/late', [{ offset: '0', event: clean[7] }]);
    commands.mockClear();
    expect((await store.seal(AFTER_THE_EVENTS)).sealed).toEqual([CLEAN_DAY]);
    expect(recomputesOf(CLEAN_DAY).every((q) => q.includes('UNION ALL'))).toBe(true);
    expect(await perSlot(database, 'exact_daily')).toEqual(expected.perSlot);
    await store.close();
  });
});
