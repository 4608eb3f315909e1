import { describe, expect, it } from 'vitest';
import { loadCatalog } from '@app/catalog';
import { ReportCode } from '@app/report-model';
import type { AuthenticatedUser } from '../auth/authentication.service';
import { ReportingException } from '../reporting.exception';
import { validateReportRequest } from '../request/request-validator';
import { defaultDirection, planReport, type ReportPlan } from './report-planner';

const catalog = loadCatalog();
const NOW = new Date('2026-11-22T10:30:00.000Z');

function userOf(id: string): AuthenticatedUser {
  const user = catalog.users.get(id)!;
  return { user, account: catalog.accounts.get(user.accountId)! };
}

const PUB = userOf('demo-pub');
const PUB2 = userOf('demo-pub-2');
const ADV = userOf('demo-adv');
const LITE = userOf('demo-adv-lite');

const BASE = {
  type: 'publisher',
  startDate: '2026-11-01',
  endDate: '2026-11-20',
  splits: ['day'],
  columns: ['impressions'],
};

function plan(body: Record<string, unknown>, auth: AuthenticatedUser = PUB): ReportPlan {
  return planReport(validateReportRequest({ ...BASE, ...body }), auth, catalog, NOW);
}

function codeOf(body: Record<string, unknown>, auth: AuthenticatedUser = PUB): ReportCode | 'planned' {
  try {
    plan(body, auth);
    return 'planned';
  } catch (error) {
    expect(error).toBeInstanceOf(ReportingException);
    return (error as ReportingException).code;
  }
}

describe('planReport: type and variant', () => {
  it('plans a full user report of the type asked for', () => {
    expect(plan({}).type).toBe('publisher');
    expect(plan({ type: 'advertiser' }, ADV).type).toBe('advertiser');
  });

  it.each<[string, Record<string, unknown>, AuthenticatedUser, ReportCode]>([
    ['a full user without type', { type: undefined }, PUB, ReportCode.MissingParameter],
    ['an unknown type', { type: 'agency' }, PUB, ReportCode.InvalidInput],
    ['a publisher report for a media group', {}, ADV, ReportCode.NotPublisherAccount],
    ['an advertiser report for a publisher', { type: 'advertiser' }, PUB, ReportCode.NotMediaGroupAccount],
    [
      'an advertiser-only user asking for publisher',
      { type: 'publisher' },
      LITE,
      ReportCode.VariantTypeDenied,
    ],
    ['an advertiser-only user asking for another type', { type: 'agency' }, LITE, ReportCode.InvalidInput],
  ])('refuses %s', (_name, body, auth, code) => expect(codeOf(body, auth)).toBe(code));

  it('lets the advertiser-only variant omit type or say advertiser', () => {
    expect(plan({ type: undefined }, LITE)).toMatchObject({ type: 'advertiser', variant: 'advertiser_only' });
    expect(plan({ type: 'advertiser' }, LITE).type).toBe('advertiser');
  });
});

describe('planReport: dates', () => {
  it('resolves both dates to UTC days', () => {
    expect(plan({ startDate: '-7 days', endDate: 'yesterday' }).range).toEqual({
      start: '2026-11-15',
      end: '2026-11-21',
    });
    expect(plan({ startDate: 'first day of last month', endDate: 'last day of last month' }).range).toEqual({
      start: '2026-10-01',
      end: '2026-10-31',
    });
  });

  it('allows exactly one calendar year, 29 February + 1 year being 28 February', () => {
    expect(plan({ startDate: '2025-11-21', endDate: '2026-11-21' }).range.start).toBe('2025-11-21');
    expect(codeOf({ startDate: '2025-11-20', endDate: '2026-11-21' })).toBe(ReportCode.InvalidInput);
    const leap = { startDate: '2024-02-29', endDate: '2025-02-28' };
    expect(plan(leap).range).toEqual({ start: '2024-02-29', end: '2025-02-28' });
    expect(codeOf({ ...leap, endDate: '2025-03-01' })).toBe(ReportCode.InvalidInput);
  });

  it.each([
    ['an unparseable start', { startDate: 'whenever' }],
    ['an impossible date', { startDate: '2026-02-30' }],
    ['a start of today', { startDate: 'today', endDate: 'today' }],
    ['an end of today', { endDate: '2026-11-22' }],
    ['an end in the future', { endDate: '+3 days' }],
    ['a start after the end', { startDate: '2026-11-10', endDate: '2026-11-09' }],
  ])('refuses %s with 903', (_name, body) => expect(codeOf(body)).toBe(ReportCode.InvalidInput));

  /** The message of the 903 a body gets. */
  function messageOf(body: Record<string, unknown>): string {
    try {
      plan(body);
    } catch (error) {
      expect((error as ReportingException).code).toBe(ReportCode.InvalidInput);
      return (error as ReportingException).message;
    }
    throw new Error('planned');
  }

  it.each([
    // The two requests of issue 22, which reached the store as invalid dates (53).
    ['endDate', { startDate: 'last day of last quarter', endDate: '-9007199254740993 seconds' }],
    ['endDate', { startDate: 'first day of last quarter', endDate: '-99999999999 years' }],
    ['startDate', { startDate: '-99999999999 years', endDate: '-99999999999 years' }],
    ['startDate', { startDate: '-8000 years', endDate: '-7999 years' }],
    ['startDate', { startDate: '1969-06-01', endDate: '1970-05-31' }],
    ['endDate', { startDate: '1970-01-01', endDate: '+1000000 weeks' }],
  ])('refuses a day out of the supported range with a 903 naming %s', (field, body) => {
    const message = messageOf(body);
    expect(message).toContain(`${field}: ${JSON.stringify((body as Record<string, string>)[field])}`);
    expect(message).toContain('outside the supported dates (1970-01-01 to 2105-12-31)');
  });

  it('plans the first supported day', () => {
    expect(plan({ startDate: '1970-01-01', endDate: '1970-01-31' }).range.start).toBe('1970-01-01');
    expect(plan({ startDate: '-20779 days', endDate: '-20779 days' }).range.start).toBe('1970-01-01');
  });

  it('accepts a single day', () => {
    expect(plan({ startDate: '2026-11-21', endDate: '2026-11-21' }).range).toEqual({
      start: '2026-11-21',
      end: '2026-11-21',
    });
  });
});

describe('planReport: split and tier', () => {
  it('reads exact splits from the exact tier and inexact ones from the sample', () => {
    expect(plan({ splits: ['campaign_id'] }, PUB)).toMatchObject({ split: 'campaign_id', tier: 'exact' });
    expect(plan({ splits: ['country'] })).toMatchObject({ split: 'country', tier: 'inexact' });
    expect(plan({ splits: [] })).toMatchObject({ split: undefined, tier: 'exact' });
  });

  it('reads publisher_domain from the sample in the advertiser-only variant, as part 2.2 says', () => {
    expect(plan({ type: 'advertiser', splits: ['publisher_domain'] }, ADV).tier).toBe('exact');
    expect(plan({ type: undefined, splits: ['publisher_domain'] }, LITE).tier).toBe('inexact');
  });

  it('reads from the sample when a filter is on an inexact dimension, whatever the split', () => {
    const filters = [{ dimension: 'gender', operator: 'equals', values: ['female'] }];
    expect(plan({ splits: ['day'], filters }).tier).toBe('inexact');
  });

  it.each<[string, Record<string, unknown>, AuthenticatedUser]>([
    ['an unknown split', { splits: ['weather'] }, PUB],
    ['a publisher-only split in an advertiser report', { type: 'advertiser', splits: ['list_id'] }, ADV],
    ['a split the advertiser-only variant lacks', { type: undefined, splits: ['email_domain'] }, LITE],
  ])('refuses %s with 1005', (_name, body, auth) =>
    expect(codeOf(body, auth)).toBe(ReportCode.InvalidDimension),
  );

  it('scopes a publisher report to the account publishers and an advertiser report to its advertisers', () => {
    expect(plan({}).scope).toEqual({ publisherIds: ['pub-1', 'pub-2', 'pub-3'] });
    expect(plan({}, PUB2).scope).toEqual({ publisherIds: ['pub-4', 'pub-5'] });
    expect(plan({ type: 'advertiser' }, ADV).scope).toEqual({ advertiserIds: ['adv-1', 'adv-2', 'adv-3'] });
  });
});

describe('planReport: columns', () => {
  it('keeps the columns of the type in the order asked, and names the others as removed', () => {
    const result = plan({ columns: ['clicks', 'spend', 'publisher_name', 'weather', 'revenue', 'ctr'] });
    expect(result.columns).toEqual(['clicks', 'publisher_name', 'revenue', 'ctr']);
    expect(result.removedColumns).toEqual(['spend', 'weather']);
  });

  it('keeps a column named twice once and reports the second mention as removed', () => {
    const result = plan({ columns: ['clicks', 'impressions', 'clicks'] });
    expect(result.columns).toEqual(['clicks', 'impressions']);
    expect(result.removedColumns).toEqual(['clicks']);
  });

  it('removes split names, which are not columns, and keeps any text as a removed name', () => {
    const result = plan({ columns: ['day', '', 'a,b', 'x\r\ny'] });
    expect(result.columns).toEqual([]);
    expect(result.removedColumns).toEqual(['day', '', 'a,b', 'x\r\ny']);
  });

  it('gives the advertiser-only variant its reduced metrics and the attributes', () => {
    const result = plan(
      { type: undefined, columns: ['spend', 'revenue', 'gross_cpm', 'net_cpm', 'campaign_name'] },
      LITE,
    );
    expect(result.columns).toEqual(['spend', 'gross_cpm', 'campaign_name']);
    expect(result.removedColumns).toEqual(['revenue', 'net_cpm']);
  });
});

describe('planReport: filters', () => {
  const filter = (dimension: string, values: (string | number)[], operator = 'equals') => ({
    filters: [{ dimension, operator, values }],
  });

  it('passes values as text, integer dimensions in their decimal form', () => {
    expect(plan(filter('hour', [7, '08', ' 9 '], 'not equals')).filters).toEqual([
      { dimension: 'hour', operator: 'not equals', values: ['7', '8', '9'] },
    ]);
    expect(plan(filter('zip', [10001, 'x y'])).filters[0].values).toEqual(['10001', 'x y']);
  });

  it.each([
    ['an integer dimension with text', filter('year', ['20x6'])],
    ['an integer dimension with a fraction', filter('month', [1.5])],
    ['an integer dimension with seven digits', filter('year', ['2026000'])],
  ])('refuses %s with 903', (_name, body) => expect(codeOf(body)).toBe(ReportCode.InvalidInput));

  it('refuses a filter on something that is not a split element with 1005', () => {
    expect(codeOf(filter('impressions', ['1']))).toBe(ReportCode.InvalidDimension);
  });

  it('accepts a filter on a publisher-only dimension in an advertiser report (part 4.2: any split element)', () => {
    expect(plan({ type: 'advertiser', ...filter('list_id', ['l1']) }, ADV).filters).toHaveLength(1);
  });

  it.each<[string, string, string, AuthenticatedUser, Record<string, unknown>]>([
    ['publisher', 'publisher_id', 'pub-4', PUB, {}],
    ['template', 'template_id', 'tpl-4-1', PUB, {}],
    ['ad slot', 'ad_slot_id', 'slot-4-1-1', PUB, {}],
    ['advertiser', 'advertiser_id', 'adv-4', ADV, { type: 'advertiser' }],
    ['campaign', 'campaign_id', 'cmp-4-1-1', ADV, { type: 'advertiser' }],
  ])("refuses an equals filter on another account's %s with 43", (_what, dimension, value, auth, body) => {
    expect(codeOf({ ...body, ...filter(dimension, [value]) }, auth)).toBe(ReportCode.FilterOutsideAccount);
  });

  it("allows not equals on another account's entities, equals on unknown ids and on its own", () => {
    expect(codeOf(filter('publisher_id', ['pub-4'], 'not equals'))).toBe('planned');
    expect(codeOf(filter('publisher_id', ['pub-404']))).toBe('planned');
    expect(codeOf(filter('publisher_id', ['pub-1', 'pub-3']))).toBe('planned');
  });
});

describe('planReport: sort and format', () => {
  it('keeps the rules in the order written, filling a null or empty direction with the default', () => {
    const result = plan({ columns: ['clicks', 'ctr'], sort: { ctr: 'asc', clicks: null, day: '' } });
    expect(result.sort).toEqual([
      { key: 'ctr', direction: 'asc' },
      { key: 'clicks', direction: 'desc' },
      { key: 'day', direction: 'asc' },
    ]);
  });

  it('refuses a rule on something neither the split nor a returned column', () => {
    expect(codeOf({ sort: { clicks: 'desc' } })).toBe(ReportCode.InvalidInput);
    expect(codeOf({ columns: ['weather'], sort: { weather: 'asc' } })).toBe(ReportCode.InvalidInput);
  });

  it('passes the layout options on', () => {
    expect(plan({ format: { columnNames: 'top', columnTotals: 'off' } })).toMatchObject({
      columnNames: 'top',
      columnTotals: 'off',
    });
    expect(plan({})).toMatchObject({ columnNames: undefined, columnTotals: undefined });
  });
});

describe('defaultDirection (part 4.3)', () => {
  it.each([
    ['impressions', 'desc'],
    ['ctr', 'desc'],
    ['spend', 'desc'],
    ['publisher_id', 'asc'],
    ['day', 'asc'],
    ['hour', 'asc'],
    ['age', 'asc'],
    ['zip', 'asc'],
    ['country', 'asc'],
    ['campaign_name', 'asc'],
  ])('%s sorts %s', (key, direction) => expect(defaultDirection(key)).toBe(direction));
});
