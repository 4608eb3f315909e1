import { loadCatalog } from '@app/catalog';
import { describe, expect, it } from 'vitest';
import type { BookingRequest } from './booked-layer';
import { BookingDesk } from './booking-desk';
import { MemoryDeliveryCounters } from './memory-delivery-counters';

/** The demo catalog books cmp-bk-capped with a lifetime clicks goal (500) and nothing else counted by clicks. */
const NOW = Date.parse('2026-11-22T10:30:00Z');
const request = { nowMs: NOW, timeZone: 'UTC' } as BookingRequest;

describe('clicks counted towards a clicks goal', () => {
  it('counts the first click of each decision once, atomically with its mark', async () => {
    const counters = new MemoryDeliveryCounters(() => NOW);
    const desk = new BookingDesk(loadCatalog(), counters);
    const life = 'c:cmp-bk-capped:clicks:life';
    const day = 'c:cmp-bk-capped:clicks:d:2026-11-22';

    expect(await desk.countClick('str-bk-capped', request, 'decision-a')).toBe(true);
    expect(await desk.countClick('str-bk-capped', request, 'decision-a')).toBe(false);
    expect(await desk.countClick('str-bk-capped', request, 'decision-b')).toBe(true);
    expect(await counters.read([life, day])).toEqual([2, 2]);

    // A strategy without a clicks goal counts nothing and marks nothing.
    expect(await desk.countClick('str-bk-paced', request, 'decision-c')).toBe(false);
    expect(await counters.read(['c:cmp-bk-paced:clicks:life', 'click:str-bk-paced:decision-c'])).toEqual([
      0, 0,
    ]);

    // The clicks goal's limit now: the next delivery is refused once the goal's clicks are in.
    const [goal] = desk.limits('str-bk-capped', { ...request, readerKey: 'r:x' }, 3_300_000, new Map());
    expect(goal).toMatchObject({ key: life, amount: 0, limit: 499 });
  });
});
