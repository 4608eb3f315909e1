import { describe, expect, it } from 'vitest';
import { buildCatalog, loadCatalog } from '@app/catalog';
import type { BookingRequest } from './booked-layer';
import { BookingDesk } from './booking-desk';
import { HOUR_MS, instantOf } from './local-time';
import { MemoryDeliveryCounters } from './memory-delivery-counters';

const TIME_ZONE = 'Europe/Paris';
const DAY_START = instantOf('2026-06-15T00:00', TIME_ZONE);
const GOAL = 4_800;

/**
 * Opens of a newsletter sent at 06:00, 12:00 and 18:00 local: a peak right after each send that
 * halves every 40 minutes, over a trickle of late opens. Requests a minute, for minute `m` of the day.
 */
function opensPerMinute(m: number): number {
  let rate = 5;
  for (const send of [6 * 60, 12 * 60, 18 * 60]) {
    if (m >= send) {
      rate += 100 * 0.5 ** ((m - send) / 40);
    }
  }
  return rate;
}

function deskWith(booking: unknown, now: () => number) {
  const doc = JSON.parse(JSON.stringify(loadCatalog().document)) as {
    campaigns: { id: string; booking?: unknown }[];
    publishers: { id: string; timeZone?: string }[];
  };
  doc.publishers.find((p) => p.id === 'pub-1')!.timeZone = TIME_ZONE;
  doc.campaigns.find((c) => c.id === 'cmp-1-1-1')!.booking = booking;
  const counters = new MemoryDeliveryCounters(now);
  return { desk: new BookingDesk(buildCatalog(doc), counters), counters };
}

/** A day of opens on a simulated clock; `slowHour` gets a fifth of its traffic (an outage). */
async function simulate(booking: unknown, slowHour?: number) {
  let now = DAY_START;
  const { desk } = deskWith(booking, () => now);
  const delivered = new Array<number>(24).fill(0);
  const traffic = new Array<number>(24).fill(0);
  const reasons = new Map<string, number>();
  const base: Omit<BookingRequest, 'nowMs' | 'readerKey'> = {
    timeZone: TIME_ZONE,
    publisherId: 'pub-1',
    templateId: 'tpl-1-1',
    adSlotId: 'slot-1-1-1',
    listId: '',
    keyValues: [],
    country: 'FR',
    region: '',
    deviceType: 'Phone',
    os: '',
    browser: '',
    emailDomain: '',
    age: '',
    gender: '',
  };
  let carry = 0;
  for (let minute = 0; minute < 24 * 60; minute++) {
    const hour = Math.floor(minute / 60);
    carry += opensPerMinute(minute) * (hour === slowHour ? 0.2 : 1);
    const count = Math.floor(carry);
    carry -= count;
    for (let i = 0; i < count; i++) {
      now = DAY_START + minute * 60_000 + Math.floor((i * 60_000) / count);
      traffic[hour]++;
      const request = { ...base, nowMs: now, readerKey: `r:${minute}:${i}` };
      const candidate = { strategyId: 'str-1-1-1-1', priceMicros: 1_600_000 };
      const { verdicts, counts } = await desk.screen([candidate], request);
      const verdict = verdicts[0].eligible
        ? await desk.commit(candidate.strategyId, request, candidate.priceMicros, counts)
        : verdicts[0];
      if (verdict.eligible) {
        delivered[hour]++;
      } else {
        reasons.set(verdict.reason, (reasons.get(verdict.reason) ?? 0) + 1);
      }
    }
  }
  now = DAY_START + 24 * HOUR_MS - 1;
  return { delivered, traffic, reasons, report: await desk.delivery(now) };
}

describe('even pacing over a day of email opens (simulated clock)', () => {
  const even = {
    start: '2026-06-15',
    end: '2026-06-15',
    pacing: 'even',
    goals: [{ metric: 'impressions', lifetime: GOAL }],
  };

  it('ends each hour within 5 % of its target and delivers the goal by the end of the flight', async () => {
    const { delivered, traffic, reasons, report } = await simulate(even, 3);
    const total = delivered.reduce((a, b) => a + b, 0);
    expect(total).toBe(GOAL);
    let before = 0;
    for (let hour = 0; hour < 24; hour++) {
      // The hour's target: what is left of the goal when the hour begins, over the hours left.
      const target = (GOAL - before) / (24 - hour);
      if (traffic[hour] >= target * 1.05) {
        expect(Math.abs(delivered[hour] - target) / target, `hour ${hour}`).toBeLessThanOrEqual(0.05);
      } else {
        // Too few opens to reach it: every one of them gets the ad, and the hours after catch up.
        expect(delivered[hour], `hour ${hour}`).toBe(traffic[hour]);
      }
      before += delivered[hour];
    }
    // The outage hour fell short; the rest of the day caught it up within 5 % of the plain share.
    expect(delivered[3]).toBeLessThan(GOAL / 24);
    for (let hour = 4; hour < 24; hour++) {
      expect(Math.abs(delivered[hour] - GOAL / 24) / (GOAL / 24), `hour ${hour}`).toBeLessThanOrEqual(0.05);
    }
    // The peaks had far more opens than the pace let through: those were paced, not lost to the goal.
    expect(Math.max(...traffic)).toBeGreaterThan(5 * (GOAL / 24));
    expect(reasons.get('paced')).toBeGreaterThan(0);
    expect(report[0]).toMatchObject({ scope: 'campaign', id: 'cmp-1-1-1', pacing: 'even' });
    expect(report[0].goals[0]).toMatchObject({ metric: 'impressions', deliveredLifetime: GOAL });
  });

  it('spreads a daily goal over the day the same way', async () => {
    const { delivered } = await simulate({ ...even, goals: [{ metric: 'impressions', daily: GOAL }] });
    expect(delivered.reduce((a, b) => a + b, 0)).toBe(GOAL);
    for (let hour = 0; hour < 24; hour++) {
      expect(Math.abs(delivered[hour] - GOAL / 24) / (GOAL / 24), `hour ${hour}`).toBeLessThanOrEqual(0.05);
    }
  });

  it('asap takes every open until the goal is met', async () => {
    const { delivered, traffic, reasons } = await simulate({ ...even, pacing: 'asap' });
    expect(delivered.reduce((a, b) => a + b, 0)).toBe(GOAL);
    const firstShort = delivered.findIndex((d, h) => d < traffic[h]);
    expect(delivered.slice(0, firstShort)).toEqual(traffic.slice(0, firstShort));
    expect(delivered.slice(firstShort + 1).every((d) => d === 0)).toBe(true);
    expect(reasons.get('goal_reached')).toBeGreaterThan(0);
    expect(reasons.has('paced')).toBe(false);
  });
});
