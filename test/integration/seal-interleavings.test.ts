import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdEvent } from '@app/events';
import { ClosedDaySealer } from '@app/report-store';
import {
  PrivateStack,
  clickHouseSql,
  makeEvent,
  requireOrSkip,
  stackServersInstalled,
  testClickHouseStore,
  tiersAgainstRaw,
  unsealedDays,
} from '@app/testing';

/**
 * The sealer stopped at every step of a pass, as a `kill -9` would stop it (a sealer keeps no state
 * but what it wrote to ClickHouse, so stopping its statements at step k leaves what a kill there
 * leaves), sometimes followed by a ClickHouse kill and restart (which loads again the parts a swap
 * had replaced), then two new sealers at once: every tier must equal a recomputation from the raw
 * events, whatever step was the last. Between rounds, late events make every day stale again.
 */

const NOW = new Date('2026-11-03T00:00:05.000Z');
/** Two closed days in two months: every kind of step, the months' copies included, twice over. */
const DAYS = ['2026-10-31', '2026-11-01'];
/**
 * A ClickHouse client whose `command` fails from the `stopAt`-th call on: a sealer killed there.
 * `atStop` runs once, at that moment (a ClickHouse kill right after the statement before), and
 * `statements` keeps what ran.
 */
function stoppingClient(
  client: ClickHouseClient,
  stopAt: number,
  atStop: () => void = () => undefined,
): { client: ClickHouseClient; ran: () => number; statements: string[] } {
  let calls = 0;
  const statements: string[] = [];
  const proxy = new Proxy(client, {
    get(target, property, receiver) {
      if (property === 'command') {
        return (params: Parameters<ClickHouseClient['command']>[0]) => {
          calls += 1;
          if (calls === stopAt) {
            atStop();
          }
          if (calls >= stopAt) {
            return Promise.reject(new Error(`sealer killed before statement ${calls}`));
          }
          statements.push(params.query);
          return target.command(params);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { client: proxy, ran: () => Math.min(calls, stopAt - 1), statements };
}

function eventsOf(round: number, count: number): AdEvent[] {
  return Array.from({ length: count }, (_, i) =>
    makeEvent({
      event_id: `r${round}-${i}`,
      ts: `${DAYS[i % DAYS.length]}T${String(i % 24).padStart(2, '0')}:15:00.000Z`,
      type: (['impression', 'impression', 'click', 'conversion'] as const)[i % 4],
      publisher_id: ['pub-1', 'pub-2'][i % 2],
      advertiser_id: ['adv-1', 'adv-2', 'adv-3'][i % 3],
      country: ['US', 'FR', 'DE'][i % 3],
      zip: String(10_000 + (i % 17)),
      spend_micros: 1_000 + i,
    }),
  );
}

describe.runIf(
  requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java for a private stack'),
)('a sealer stopped at any step, with ClickHouse restarts', () => {
  const database = `adx_test_${process.pid}_${Date.now()}_interleave`;
  let stack: PrivateStack;

  beforeAll(async () => {
    stack = await PrivateStack.create('interleave');
    stack.up('clickhouse');
  }, 240_000);
  afterAll(() => stack?.down('clickhouse'), 120_000);

  it('every tier equals its recomputation after a pass stopped at each step, and a new pass', async () => {
    const sql = clickHouseSql(() => stack.clickhouseUrl);
    const options = { url: stack.clickhouseUrl, sampleDenominator: 4, queryTimeoutMs: 30_000 };
    const store = testClickHouseStore(database, options);
    await store.migrate();
    const client = () => createClient({ url: stack.clickhouseUrl, database, request_timeout: 30_000 });

    let offset = 0;
    const ingest = async (events: readonly AdEvent[]) => {
      await store.ingest(
        'interleave/0',
        events.map((event) => ({ offset: String((offset += 1)), event })),
      );
    };

    // A full pass's statements, counted once on days sealed before (a first seal has a step more):
    // every step of it is a place to stop.
    await ingest(eventsOf(0, 400));
    await store.seal(NOW);
    await ingest(eventsOf(0.5, 40));
    const counting = stoppingClient(client(), Number.MAX_SAFE_INTEGER);
    await new ClosedDaySealer(counting.client, database).seal(NOW);
    const steps = counting.ran();
    // ClickHouse is also killed right after three of the swaps (the first day's, one in the middle
    // and the last month's copy): the parts each replaced are still on disk then, as they are for
    // a few seconds after any swap, and come back with the restart.
    const swaps = counting.statements.flatMap((q, i) => (/REPLACE PARTITION/.test(q) ? [i + 2] : []));
    const clickhouseKills = new Set([swaps[0], swaps[Math.floor(swaps.length / 2)], swaps[swaps.length - 1]]);
    expect(clickhouseKills.size).toBe(3);
    expect(counting.statements[swaps[swaps.length - 1] - 2]).toMatch(/inexact_monthly REPLACE/);
    expect(await unsealedDays(sql, database, DAYS)).toEqual([]);

    let ghostsSeen = 0;
    for (let stopAt = 1; stopAt <= steps; stopAt += 1) {
      // Late events on every day, and some delivered twice: every tier and month is stale again.
      // Not twice before a ClickHouse kill: the views' rows of a late duplicate count twice until
      // the next seal (docs/exactness.md), and the report read after the restart must differ from
      // the raw events only by what the restart brought back.
      const late = eventsOf(stopAt, 60);
      await ingest(clickhouseKills.has(stopAt) ? late : [...late, ...late.slice(0, 10)]);
      const kill = clickhouseKills.has(stopAt);
      const stopped = stoppingClient(client(), stopAt, () => kill && stack.kill('clickhouse'));
      await expect(new ClosedDaySealer(stopped.client, database).seal(NOW)).rejects.toThrow(/sealer killed/);
      if (kill) {
        stack.down('clickhouse');
        stack.up('clickhouse');
        for (const table of ['exact_daily', 'inexact_sample', 'inexact_daily', 'inexact_monthly']) {
          const twice = await sql(
            `SELECT count() FROM (SELECT day FROM ${database}.${table} WHERE seal_mark > 0
               GROUP BY day HAVING count() > 1) FORMAT TSV`,
          );
          ghostsSeen += Number(twice[0]);
        }
        // A report over the days with parts back: the store seals them before it reads, so that
        // it answers what the raw events say, never a day counted twice.
        const reader = testClickHouseStore(database, options);
        const rows = await reader.query({
          range: { start: DAYS[0], end: DAYS[DAYS.length - 1] },
          split: 'day',
          filters: [],
          scope: {},
          tier: 'exact',
        });
        await reader.close();
        expect(rows.map((r) => `${r.key}\t${r.measures.clicks}`)).toEqual(
          await sql(
            `SELECT toString(event_date), sum(clicks) FROM ${database}.events_raw FINAL
             GROUP BY event_date ORDER BY event_date FORMAT TSV`,
          ),
        );
      }
      // Two sealers at once repair it (as two ingest processes would), then a pass that takes the
      // stopped sealer's staging tables for abandoned at once.
      const [first, second] = [client(), client()];
      await Promise.all([
        new ClosedDaySealer(first, database).seal(NOW),
        new ClosedDaySealer(second, database).seal(NOW),
      ]);
      await new ClosedDaySealer(first, database, 0).seal(NOW);
      await Promise.all([first.close(), second.close()]);
      expect(await unsealedDays(sql, database, DAYS), `stopped before statement ${stopAt}`).toEqual([]);
      for (const { what, tier, raw } of await tiersAgainstRaw(sql, database)) {
        expect(tier, `${what}, stopped before statement ${stopAt}`).toEqual(raw);
      }
      expect(
        await sql(
          `SELECT name FROM system.tables WHERE database = '${database}' AND name LIKE 'seal\\_%' FORMAT TSV`,
        ),
      ).toEqual([]);
    }
    // The restarts did bring replaced parts back (each kill followed a swap at once): the reports
    // and the passes above repaired them.
    expect(ghostsSeen).toBeGreaterThanOrEqual(clickhouseKills.size);
    await store.close();
  }, 900_000);
});
