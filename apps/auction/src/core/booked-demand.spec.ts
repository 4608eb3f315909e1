import { MemoryDeliveryCounters } from '@app/booking';
import { buildCatalog, loadCatalog } from '@app/catalog';
import { bookingSkips } from '@app/observability';
import { describe, expect, it } from 'vitest';
import type { AdContext } from './ad-context';
import { BookedDemand } from './booked-demand';
import type { Candidate } from './candidate';

function demandWith(booking: unknown): BookedDemand {
  const doc = JSON.parse(JSON.stringify(loadCatalog().document)) as {
    campaigns: { id: string; booking?: unknown }[];
  };
  doc.campaigns.find((c) => c.id === 'cmp-1-1-1')!.booking = booking;
  return new BookedDemand(buildCatalog(doc), new MemoryDeliveryCounters());
}

const catalog = loadCatalog();
const ctx = {
  now: new Date('2026-03-10T12:00:00Z'),
  slot: catalog.adSlots.get('slot-1-1-1')!,
  template: catalog.templates.get('tpl-1-1')!,
  publisher: catalog.publishers.get('pub-1')!,
  tag: {
    listId: 'finance',
    keyValues: [['section', 'markets']],
    emailDomain: 'gmail.com',
    age: '',
    gender: '',
  },
  viewer: {
    userKey: 'r:1',
    geo: { country: 'US', region: 'NY', metro: '', zip: '' },
    device: { device_type: 'Phone', os: 'iOS', browser: 'Gmail', device_maker: '', device_model: '' },
  },
} as unknown as AdContext;
const booked: Candidate = {
  demandType: 'direct',
  priceMicros: 1_600_000,
  strategyId: 'str-1-1-1-1',
  creativeId: 'cr-1-1-1-1-1',
  advertiserDomain: 'acmeoutdoor.com',
};
const unbooked: Candidate = { ...booked, strategyId: 'str-2-1-2-1', creativeId: 'x' };
const skips = async (reason: string) =>
  (await bookingSkips.get()).values.find(
    (v) => v.labels.strategy === 'str-1-1-1-1' && v.labels.reason === reason,
  )?.value ?? 0;

describe('booked demand before the auction', () => {
  it.each([
    ['out of flight', { end: '2026-03-09' }, 'out_of_flight'],
    [
      'targeted elsewhere',
      { targeting: { keyValuesAllOf: [{ key: 'section', values: ['sports'] }] } },
      'targeting',
    ],
    ['another list', { targeting: { lists: { exclude: ['finance'] } } }, 'targeting'],
  ])('leaves a booked candidate %s out, counted by reason', async (_name, booking, reason) => {
    const before = await skips(reason);
    const screen = await demandWith(booking).screen(ctx, [booked, unbooked]);
    expect(screen.paid).toEqual([unbooked]);
    expect(await skips(reason)).toBe(before + 1);
  });

  it('keeps a booked candidate that matches, and commits its delivery up to its goal', async () => {
    const demand = demandWith({
      goals: [{ metric: 'impressions', lifetime: 1 }],
      targeting: { countries: { include: ['US'] } },
    });
    const first = await demand.screen(ctx, [booked, unbooked]);
    expect(first.paid).toEqual([booked, unbooked]);
    expect(await demand.commit(booked, first)).toBe(true);
    // A second commit on the same stale counts is refused by the counter itself.
    expect(await demand.commit(booked, first)).toBe(false);
    const second = await demand.screen(ctx, [booked]);
    expect(second.paid).toEqual([]);
    expect(await demand.commit(unbooked, second)).toBe(true);
  });
});
