import type { BookingRecord } from '@app/catalog';
import { describe, expect, it } from 'vitest';
import { BookedLayer, type BookingRequest } from './booked-layer';
import { SkipReason } from './booking-verdict';
import { HOUR_MS, instantOf, localMinute } from './local-time';
import { MemoryDeliveryCounters } from './memory-delivery-counters';

/** 2026-03-10 14:30 in New York (EDT since 8 March: UTC-4). */
const NOW = Date.parse('2026-03-10T18:30:00Z');
const request: BookingRequest = {
  nowMs: NOW,
  timeZone: 'America/New_York',
  publisherId: 'pub-1',
  templateId: 'tpl-1-1',
  adSlotId: 'slot-1-1-1',
  listId: 'finance',
  keyValues: [
    ['section', 'markets'],
    ['tier', 'gold'],
  ],
  country: 'US',
  region: 'NY',
  deviceType: 'Phone',
  os: 'iOS',
  browser: 'Apple Mail',
  emailDomain: 'gmail.com',
  age: '25-34',
  gender: 'female',
  readerKey: 'r:abc',
};
const noCounts = () => 0;
const counted = (values: Record<string, number>) => (key: string) => values[key] ?? 0;

type Row = [
  string,
  BookingRecord,
  Partial<BookingRequest>,
  ((key: string) => number) | undefined,
  SkipReason | 'eligible',
];

const table: Row[] = [
  ['no booking terms', {}, {}, undefined, 'eligible'],
  ['inside the flight', { start: '2026-03-10', end: '2026-03-10' }, {}, undefined, 'eligible'],
  ['before the flight (local time)', { start: '2026-03-10T15:00' }, {}, undefined, SkipReason.OutOfFlight],
  ['after the flight (end day flown in full)', { end: '2026-03-09' }, {}, undefined, SkipReason.OutOfFlight],
  [
    'the same instant is inside in UTC',
    { end: '2026-03-10T18:00' },
    { timeZone: 'UTC' },
    undefined,
    SkipReason.OutOfFlight,
  ],
  ['publisher included', { targeting: { publishers: { include: ['pub-1'] } } }, {}, undefined, 'eligible'],
  [
    'publisher excluded',
    { targeting: { publishers: { exclude: ['pub-1'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  [
    'template not included',
    { targeting: { templates: { include: ['tpl-1-2'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  [
    'slot excluded',
    { targeting: { adSlots: { exclude: ['slot-1-1-1'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  ['list included', { targeting: { lists: { include: ['finance', 'news'] } } }, {}, undefined, 'eligible'],
  [
    'list missing',
    { targeting: { lists: { include: ['finance'] } } },
    { listId: '' },
    undefined,
    SkipReason.Targeting,
  ],
  [
    'kv all-of holds',
    {
      targeting: {
        keyValuesAllOf: [
          { key: 'section', values: ['markets'] },
          { key: 'tier', values: ['gold', 'silver'] },
        ],
      },
    },
    {},
    undefined,
    'eligible',
  ],
  [
    'kv all-of misses one',
    {
      targeting: {
        keyValuesAllOf: [
          { key: 'section', values: ['markets'] },
          { key: 'tier', values: ['silver'] },
        ],
      },
    },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  [
    'kv any-of holds by one',
    {
      targeting: {
        keyValuesAnyOf: [
          { key: 'section', values: ['sports'] },
          { key: 'tier', values: ['gold'] },
        ],
      },
    },
    {},
    undefined,
    'eligible',
  ],
  [
    'kv any-of misses all',
    { targeting: { keyValuesAnyOf: [{ key: 'section', values: ['sports'] }] } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  ['country', { targeting: { countries: { include: ['CA'] } } }, {}, undefined, SkipReason.Targeting],
  [
    'unknown country fails an include',
    { targeting: { countries: { include: ['US'] } } },
    { country: '' },
    undefined,
    SkipReason.Targeting,
  ],
  ['region, case-insensitive', { targeting: { regions: { include: ['US-ny'] } } }, {}, undefined, 'eligible'],
  [
    'region excluded',
    { targeting: { regions: { exclude: ['US-NY'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  ['device type', { targeting: { deviceTypes: { include: ['PC'] } } }, {}, undefined, SkipReason.Targeting],
  ['os, case-insensitive', { targeting: { os: { include: ['ios'] } } }, {}, undefined, 'eligible'],
  [
    'email client excluded',
    { targeting: { browsers: { exclude: ['apple mail'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  [
    'email domain',
    { targeting: { emailDomains: { include: ['yahoo.com'] } } },
    {},
    undefined,
    SkipReason.Targeting,
  ],
  ['age', { targeting: { ages: ['25-34'] } }, {}, undefined, 'eligible'],
  ['age unknown', { targeting: { ages: ['25-34'] } }, { age: '' }, undefined, SkipReason.Targeting],
  ['gender', { targeting: { genders: ['male'] } }, {}, undefined, SkipReason.Targeting],
  [
    'exclusion group already in the email',
    { exclusionGroups: ['banks'] },
    { exclusions: new Set(['banks']) },
    undefined,
    SkipReason.Excluded,
  ],
  [
    'other groups in the email',
    { exclusionGroups: ['banks'] },
    { exclusions: new Set(['airlines']) },
    undefined,
    'eligible',
  ],
  [
    'lifetime goal reached',
    { goals: [{ metric: 'impressions', lifetime: 100 }] },
    {},
    counted({ 's:x:impressions:life': 100 }),
    SkipReason.GoalReached,
  ],
  [
    'lifetime goal one short',
    { goals: [{ metric: 'impressions', lifetime: 100 }] },
    {},
    counted({ 's:x:impressions:life': 99 }),
    'eligible',
  ],
  [
    'daily goal reached (publisher day)',
    { goals: [{ metric: 'impressions', daily: 10 }] },
    {},
    counted({ 's:x:impressions:d:2026-03-10': 10 }),
    SkipReason.GoalReached,
  ],
  [
    'spend goal: the next impression would pass it',
    { goals: [{ metric: 'spend', lifetime: 1_000_000 }] },
    {},
    counted({ 's:x:spend:life': 1_000_000_000 - 1_000 }),
    SkipReason.GoalReached,
  ],
  [
    'clicks goal reached',
    { goals: [{ metric: 'clicks', lifetime: 5 }] },
    {},
    counted({ 's:x:clicks:life': 5 }),
    SkipReason.GoalReached,
  ],
  [
    'even pacing: the hour is spent',
    // 14:00 local, 10 hours left: 140 delivered before this hour, 100 to go: 10 this hour, all 10 served.
    {
      start: '2026-03-10',
      end: '2026-03-10',
      pacing: 'even',
      goals: [{ metric: 'impressions', lifetime: 240 }],
    },
    {},
    counted({ 's:x:impressions:life': 150, [`s:x:impressions:h:${Math.floor(NOW / HOUR_MS)}`]: 10 }),
    SkipReason.Paced,
  ],
  [
    'even pacing: a slow morning is caught up',
    // 14:00 local: 10 hours left, 140 of 240 to go: 14 this hour.
    {
      start: '2026-03-10',
      end: '2026-03-10',
      pacing: 'even',
      goals: [{ metric: 'impressions', lifetime: 240 }],
    },
    {},
    counted({ 's:x:impressions:life': 110, [`s:x:impressions:h:${Math.floor(NOW / HOUR_MS)}`]: 10 }),
    'eligible',
  ],
  [
    'asap pacing ignores the hour',
    {
      start: '2026-03-10',
      end: '2026-03-10',
      pacing: 'asap',
      goals: [{ metric: 'impressions', lifetime: 240 }],
    },
    {},
    counted({ 's:x:impressions:life': 140, [`s:x:impressions:h:${Math.floor(NOW / HOUR_MS)}`]: 100 }),
    'eligible',
  ],
  [
    'cap per day reached by this reader',
    { frequencyCaps: [{ count: 2, period: 'day' }] },
    {},
    counted({ 's:x:cap:r:abc:d:2026-03-10': 2 }),
    SkipReason.CapReached,
  ],
  [
    'cap per day: another reader',
    { frequencyCaps: [{ count: 2, period: 'day' }] },
    { readerKey: 'r:other' },
    counted({ 's:x:cap:r:abc:d:2026-03-10': 2 }),
    'eligible',
  ],
  [
    'cap per flight reached',
    { frequencyCaps: [{ count: 3, period: 'flight' }] },
    {},
    counted({ 's:x:cap:r:abc:f': 3 }),
    SkipReason.CapReached,
  ],
  [
    'cap per hour reached',
    { frequencyCaps: [{ count: 1, period: 'hour' }] },
    {},
    counted({ [`s:x:cap:r:abc:h:${Math.floor(NOW / HOUR_MS)}`]: 1 }),
    SkipReason.CapReached,
  ],
  [
    'out of flight wins over targeting and goals',
    {
      end: '2026-03-01',
      targeting: { countries: { include: ['FR'] } },
      goals: [{ metric: 'impressions', lifetime: 1 }],
    },
    {},
    counted({ 's:x:impressions:life': 1 }),
    SkipReason.OutOfFlight,
  ],
];

describe('a booking judged against a request', () => {
  it.each(table)('%s', (_name, booking, change, counts, expected) => {
    const verdict = new BookedLayer('strategy', 'x', booking).judge(
      { ...request, ...change },
      2_000_000,
      counts ?? noCounts,
    );
    expect(verdict.eligible ? 'eligible' : verdict.reason).toBe(expected);
  });

  it('never throws on an empty request', () => {
    const layer = new BookedLayer('campaign', 'c', {
      start: '2026-03-01',
      end: '2026-03-31',
      pacing: 'even',
      goals: [{ metric: 'impressions', lifetime: 10, daily: 5 }],
      targeting: { keyValuesAllOf: [{ key: 'k', values: ['v'] }] },
    });
    const empty = { ...request, keyValues: [], listId: '', country: '', region: '', age: '', gender: '' };
    expect(layer.judge(empty, 0, noCounts)).toEqual({ eligible: false, reason: SkipReason.Targeting });
  });
});

describe('local time', () => {
  it('reads the wall clock of a time zone and back, across a DST change', () => {
    expect(localMinute(NOW, 'America/New_York')).toBe('2026-03-10T14:30');
    expect(localMinute(NOW, 'Asia/Kolkata')).toBe('2026-03-11T00:00');
    expect(instantOf('2026-03-10T14:30', 'America/New_York')).toBe(NOW);
    // 8 March 2026 02:30 does not exist in New York: the instant after the gap.
    expect(new Date(instantOf('2026-03-08T03:00', 'America/New_York')).toISOString()).toBe(
      '2026-03-08T07:00:00.000Z',
    );
    expect(new Date(instantOf('2026-03-07T00:00', 'America/New_York')).toISOString()).toBe(
      '2026-03-07T05:00:00.000Z',
    );
  });
});

describe('memory delivery counters', () => {
  it('reserves every counter or none', async () => {
    let now = 0;
    const counters = new MemoryDeliveryCounters(() => now);
    const limits = [
      { key: 'a', amount: 1, limit: 2, ttlMs: 1000 },
      { key: 'b', amount: 5, limit: 10, ttlMs: 1000 },
    ];
    expect(await counters.reserve(limits)).toBe(-1);
    expect(await counters.reserve(limits)).toBe(-1);
    expect(await counters.reserve(limits)).toBe(0);
    expect(await counters.read(['a', 'b'])).toEqual([2, 10]);
    expect(await counters.reserve([{ key: 'c', amount: 1, limit: 1, ttlMs: 1000 }, limits[1]])).toBe(1);
    expect(await counters.read(['c'])).toEqual([0]);
    now = 1000;
    expect(await counters.read(['a', 'b'])).toEqual([0, 0]);
  });
});
