import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flightBound } from './booking.validation';
import { type CatalogException } from './catalog.exception';
import { DEMO_CATALOG_PATH, buildCatalog } from './catalog.loader';

type Doc = Record<string, Record<string, unknown>[]>;
const demo = () => JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as Doc;
const problemsOf = (doc: unknown): readonly string[] => {
  try {
    buildCatalog(doc);
    return [];
  } catch (error) {
    return (error as CatalogException).problems;
  }
};
/** The demo catalog with a booking on the direct campaign cmp-1-1-1 (and on its strategy str-1-1-1-1). */
const withBooking = (campaign: unknown, strategy?: unknown, edit?: (doc: Doc) => void): Doc => {
  const doc = demo();
  doc.campaigns.find((c) => c.id === 'cmp-1-1-1')!.booking = campaign;
  if (strategy) {
    doc.strategies.find((s) => s.id === 'str-1-1-1-1')!.booking = strategy;
  }
  edit?.(doc);
  return doc;
};

describe('booking in the catalog', () => {
  it('reads a full booking: flight, goals, pacing, caps, targeting, priority, exclusion', () => {
    const booking = {
      start: '2026-03-01',
      end: '2026-03-31T18:00',
      goals: [
        { metric: 'impressions', lifetime: 100_000, daily: 5_000 },
        { metric: 'clicks', lifetime: 500 },
      ],
      pacing: 'even',
      frequencyCaps: [
        { count: 1, period: 'hour' },
        { count: 3, period: 'day' },
      ],
      targeting: {
        publishers: { include: ['pub-1'] },
        templates: { include: ['tpl-1-1'], exclude: ['tpl-1-2'] },
        adSlots: { include: ['slot-1-1-1'] },
        lists: { include: ['finance'] },
        keyValuesAllOf: [{ key: 'section', values: ['markets', 'economy'] }],
        keyValuesAnyOf: [
          { key: 'tier', values: ['gold'] },
          { key: 'loyal', values: ['1'] },
        ],
        countries: { include: ['US', 'CA'] },
        regions: { exclude: ['US-CA'] },
        deviceTypes: { include: ['Phone', 'Tablet'] },
        os: { include: ['iOS'] },
        browsers: { exclude: ['Outlook'] },
        emailDomains: { include: ['gmail.com'] },
        ages: ['25-34', '35-44'],
        genders: ['female'],
      },
      priority: 'sponsorship',
      sponsorshipShare: 0.5,
      exclusionGroups: ['outdoor-gear'],
    };
    const doc = withBooking(booking, { start: '2026-03-02', end: '2026-03-30', pacing: 'asap' }, (d) => {
      d.publishers[0].timeZone = 'America/New_York';
    });
    const catalog = buildCatalog(doc);
    expect(catalog.campaigns.get('cmp-1-1-1')!.booking).toMatchObject(booking);
    expect(catalog.strategies.get('str-1-1-1-1')!.booking?.pacing).toBe('asap');
    expect(catalog.publishers.get('pub-1')!.timeZone).toBe('America/New_York');
  });

  it('reads a flight bound as a local wall-clock moment, the end day flown in full', () => {
    expect(flightBound('2026-03-01', 'start')).toBe('2026-03-01T00:00');
    expect(flightBound('2026-03-31', 'end')).toBe('2026-04-01T00:00');
    expect(flightBound('2026-12-31', 'end')).toBe('2027-01-01T00:00');
    expect(flightBound('2026-03-31T18:00', 'end')).toBe('2026-03-31T18:00');
  });

  const impossible: [string, unknown, unknown, ((doc: Doc) => void) | undefined, string][] = [
    ['malformed start', { start: '1 March' }, undefined, undefined, 'campaigns.0.booking.start'],
    ['a date that does not exist', { start: '2026-02-30' }, undefined, undefined, 'not a calendar date'],
    [
      'end before start',
      { start: '2026-03-10', end: '2026-03-09' },
      undefined,
      undefined,
      'ends (2026-03-09) before it starts',
    ],
    ['unknown metric', { goals: [{ metric: 'opens', lifetime: 1 }] }, undefined, undefined, 'goals.0.metric'],
    [
      'goal of zero',
      { goals: [{ metric: 'impressions', lifetime: 0 }] },
      undefined,
      undefined,
      'goals.0.lifetime',
    ],
    [
      'goal without amount',
      { goals: [{ metric: 'impressions' }] },
      undefined,
      undefined,
      'needs a lifetime or a daily amount',
    ],
    [
      'daily above lifetime',
      { goals: [{ metric: 'spend', lifetime: 10, daily: 20 }] },
      undefined,
      undefined,
      'exceeds the lifetime one',
    ],
    [
      'two goals of one metric',
      {
        goals: [
          { metric: 'clicks', daily: 1 },
          { metric: 'clicks', lifetime: 9 },
        ],
      },
      undefined,
      undefined,
      'two clicks goals',
    ],
    [
      'even pacing without a goal',
      { pacing: 'even', end: '2026-03-01' },
      undefined,
      undefined,
      'even pacing needs an impressions or spend goal',
    ],
    [
      'even pacing without an end',
      { pacing: 'even', goals: [{ metric: 'impressions', lifetime: 10 }] },
      undefined,
      undefined,
      'needs a flight end',
    ],
    [
      'two caps per day',
      {
        frequencyCaps: [
          { count: 1, period: 'day' },
          { count: 2, period: 'day' },
        ],
      },
      undefined,
      undefined,
      'two frequency caps per day',
    ],
    [
      'cap of zero',
      { frequencyCaps: [{ count: 0, period: 'day' }] },
      undefined,
      undefined,
      'frequencyCaps.0.count',
    ],
    [
      'unknown cap period',
      { frequencyCaps: [{ count: 1, period: 'week' }] },
      undefined,
      undefined,
      'frequencyCaps.0.period',
    ],
    [
      'sponsorship without share',
      { priority: 'sponsorship' },
      undefined,
      undefined,
      'needs its sponsorshipShare',
    ],
    [
      'share without sponsorship',
      { sponsorshipShare: 0.2 },
      undefined,
      undefined,
      'only for priority sponsorship',
    ],
    [
      'house priority on direct',
      { priority: 'house' },
      undefined,
      undefined,
      'priority house is for house campaigns',
    ],
    [
      'unknown publisher',
      { targeting: { publishers: { include: ['pub-404'] } } },
      undefined,
      undefined,
      'targeting.publishers has unknown value pub-404',
    ],
    [
      'unknown slot',
      { targeting: { adSlots: { exclude: ['slot-404'] } } },
      undefined,
      undefined,
      'targeting.adSlots has unknown value slot-404',
    ],
    [
      'include and exclude',
      { targeting: { countries: { include: ['US'], exclude: ['US'] } } },
      undefined,
      undefined,
      'excludes everything it includes',
    ],
    [
      'bad country',
      { targeting: { countries: { include: ['usa'] } } },
      undefined,
      undefined,
      'unknown value usa',
    ],
    [
      'bad region',
      { targeting: { regions: { include: ['California'] } } },
      undefined,
      undefined,
      'unknown value California',
    ],
    [
      'bad device type',
      { targeting: { deviceTypes: { include: ['Fridge'] } } },
      undefined,
      undefined,
      'unknown value Fridge',
    ],
    ['bad age', { targeting: { ages: ['30'] } }, undefined, undefined, 'targeting.ages'],
    [
      'slot outside the publishers',
      { targeting: { publishers: { include: ['pub-2'] }, adSlots: { include: ['slot-1-1-1'] } } },
      undefined,
      undefined,
      'slot-1-1-1 lies outside',
    ],
    [
      'unknown field',
      { budget: 5 },
      undefined,
      undefined,
      'campaigns.0.booking.budget: property budget should not exist',
    ],
    [
      'strategy before its campaign',
      { start: '2026-03-05', end: '2026-03-20' },
      { start: '2026-03-01' },
      undefined,
      'starts (2026-03-01) before its campaign',
    ],
    [
      'strategy after its campaign',
      { start: '2026-03-05', end: '2026-03-20' },
      { end: '2026-03-21' },
      undefined,
      'ends (2026-03-21) after its campaign',
    ],
    [
      'takeover on a strategy',
      {},
      { takeoverTemplateId: 'tpl-1-1' },
      undefined,
      'a takeover is booked on its campaign',
    ],
    [
      'takeover template on a newsletter',
      { takeoverTemplateId: 'tpl-1-1' },
      undefined,
      undefined,
      'only for a direct campaign of type takeover',
    ],
    [
      'unknown time zone',
      {},
      undefined,
      (d) => (d.publishers[0].timeZone = 'Mars/Olympus'),
      'unknown time zone Mars/Olympus',
    ],
    [
      'booking an exchange campaign',
      {},
      undefined,
      (d) => (d.campaigns.find((c) => c.id === 'cmp-1-2-1')!.booking = {}),
      'a exchange campaign cannot be booked',
    ],
    [
      'a takeover without its template',
      {},
      undefined,
      (d) =>
        (d.campaigns.find((c) => c.id === 'cmp-5-1-1')!.booking = { start: '2026-03-01', end: '2026-03-02' }),
      'a takeover needs booking.takeoverTemplateId',
    ],
    [
      'two takeovers of one template at once',
      {},
      undefined,
      (d) => {
        const takeover = { start: '2026-03-01', end: '2026-03-02', takeoverTemplateId: 'tpl-1-1' };
        d.campaigns.find((c) => c.id === 'cmp-5-1-1')!.booking = takeover;
        d.campaigns.push({
          ...d.campaigns.find((c) => c.id === 'cmp-5-1-1')!,
          id: 'cmp-5-1-9',
          booking: { ...takeover, start: '2026-03-02', end: '2026-03-03' },
        });
      },
      'takes over template tpl-1-1 while campaign cmp-5-1-1 does',
    ],
    [
      'a takeover without a creative for each slot of its template',
      {},
      undefined,
      (d) =>
        (d.campaigns.find((c) => c.id === 'cmp-5-1-1')!.booking = {
          start: '2026-03-01',
          end: '2026-03-02',
          takeoverTemplateId: 'tpl-1-2',
        }),
      'takes over template tpl-1-2 without a creative for slot-1-2-2 (320x50)',
    ],
    [
      'a roadblock that can fill no template it targets',
      {},
      undefined,
      (d) =>
        (d.campaigns.find((c) => c.id === 'cmp-6-1-2')!.booking = {
          targeting: { templates: { include: ['tpl-1-2'] } },
        }),
      'campaign cmp-6-1-2: a roadblock needs a creative of every slot',
    ],
    [
      'two sponsorships of one slot sold above the whole slot',
      {
        priority: 'sponsorship',
        sponsorshipShare: 0.6,
        start: '2026-03-01',
        end: '2026-03-31',
        targeting: { adSlots: { include: ['slot-1-1-1'] } },
      },
      {
        priority: 'sponsorship',
        sponsorshipShare: 0.5,
        start: '2026-03-20',
        end: '2026-03-25',
        targeting: { adSlots: { include: ['slot-1-1-1'] } },
      },
      undefined,
      'ad slot slot-1-1-1: sponsorships campaign cmp-1-1-1, strategy str-1-1-1-1 fly together with shares adding up to 1.1',
    ],
    [
      'a roadblock on ad slots',
      {},
      undefined,
      (d) =>
        (d.campaigns.find((c) => c.id === 'cmp-6-1-2')!.booking = {
          targeting: { adSlots: { include: ['slot-1-1-1'] } },
        }),
      'a roadblock runs on whole templates',
    ],
  ];

  it.each(impossible)('refuses an impossible booking: %s', (_name, campaign, strategy, edit, message) => {
    const problems = problemsOf(withBooking(campaign, strategy, edit));
    expect(problems).toEqual(expect.arrayContaining([expect.stringContaining(message)]));
  });

  it('accepts two takeovers of one template one after the other', () => {
    const doc = withBooking({}, undefined, (d) => {
      const takeover = { start: '2026-03-01', end: '2026-03-02', takeoverTemplateId: 'tpl-1-1' };
      d.campaigns.find((c) => c.id === 'cmp-5-1-1')!.booking = takeover;
      d.campaigns.push({
        ...d.campaigns.find((c) => c.id === 'cmp-5-1-1')!,
        id: 'cmp-5-1-9',
        booking: { ...takeover, start: '2026-03-03', end: '2026-03-04' },
      });
      // The second takeover has its own creatives of every size of tpl-1-1.
      d.strategies.push({
        ...d.strategies.find((s) => s.id === 'str-5-1-1-1')!,
        id: 'str-5-1-9-1',
        campaignId: 'cmp-5-1-9',
      });
      for (const size of ['600x200', '300x250']) {
        d.creatives.push({
          ...d.creatives.find((c) => c.strategyId === 'str-5-1-1-1')!,
          id: `cr-5-1-9-${size}`,
          strategyId: 'str-5-1-9-1',
          size,
        });
      }
    });
    expect(problemsOf(doc)).toEqual([]);
  });

  it('accepts sponsorships of one slot above the whole slot when they do not fly together', () => {
    const sponsor = (share: number, start: string, end: string) => ({
      priority: 'sponsorship',
      sponsorshipShare: share,
      start,
      end,
      targeting: { adSlots: { include: ['slot-1-1-1'] } },
    });
    const doc = withBooking(sponsor(0.6, '2026-03-01', '2026-03-10'), undefined, (d) => {
      d.campaigns.find((c) => c.id === 'cmp-2-1-2')!.booking = sponsor(0.5, '2026-03-11', '2026-03-20');
      d.campaigns.find((c) => c.id === 'cmp-3-2-1')!.booking = sponsor(0.4, '2026-03-01', '2026-03-31');
    });
    expect(problemsOf(doc)).toEqual([]);
  });

  it('accepts a roadblock on the templates it has every size for, and a takeover of one', () => {
    const doc = withBooking({}, undefined, (d) => {
      // cmp-6-1-2 has 600x200, 300x250 and 728x90 creatives: every slot of the tpl-*-1 templates.
      d.campaigns.find((c) => c.id === 'cmp-6-1-2')!.booking = {
        start: '2026-03-01',
        end: '2026-03-31',
        goals: [{ metric: 'impressions', lifetime: 30_000 }],
        frequencyCaps: [{ count: 1, period: 'day' }],
        targeting: { publishers: { include: ['pub-1'] } },
      };
      d.campaigns.find((c) => c.id === 'cmp-5-1-1')!.booking = {
        start: '2026-03-02',
        end: '2026-03-02',
        takeoverTemplateId: 'tpl-2-1',
        goals: [{ metric: 'impressions', lifetime: 50_000 }],
      };
    });
    expect(problemsOf(doc)).toEqual([]);
  });
});
