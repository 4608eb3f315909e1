import ExcelJS from 'exceljs';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdEvent } from '@app/events';
import { ReportCode, SPLITS } from '@app/report-model';
import { demoEvents, expectedBySplit, makeEvent } from '@app/testing';
import { modes, publishEvents, startReporting, USERS, type RunningReporting } from './reporting-system';

const RANGE = { startDate: '2026-11-12', endDate: '2026-11-21' };
const PUB_IDS = ['pub-1', 'pub-2', 'pub-3'];
const ADV_IDS = ['adv-1', 'adv-2', 'adv-3'];
const COUNTS = ['unique_impressions', 'reopens', 'clicks', 'conversions', 'post_view_conversions'] as const;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

type Row = Record<string, string | number | null>;

for (const mode of modes()) {
  describe(`reporting API: reports over HTTP from events sent through the bus [${mode}]`, () => {
    let api: RunningReporting;
    let events: AdEvent[];

    beforeAll(async () => {
      api = await startReporting(mode);
      events = demoEvents(10, 3000);
      events.push(
        makeEvent({ ts: '2026-11-15T09:00:00.000Z', type: 'click', list_id: '<script>alert(1)</script>' }),
      );
      await publishEvents(api.system, events);
    });
    afterAll(async () => {
      await api?.system.close();
    });

    const ofPublisher = () => events.filter((e) => PUB_IDS.includes(e.publisher_id));
    const ofAdvertiser = () => events.filter((e) => ADV_IDS.includes(e.advertiser_id));

    for (const split of SPLITS.filter((s) => s.exactness === 'exact')) {
      it(`publisher report split by ${split.name} equals the events' sums to the unit`, async () => {
        const res = await api.client.json(USERS.pub, {
          ...RANGE,
          type: 'publisher',
          splits: [split.name],
          columns: [...COUNTS, 'revenue'],
        });
        expect([res.status, res.headers['x-report-exactness']]).toEqual([200, 'exact']);
        const expected = expectedBySplit(ofPublisher(), split.name);
        const rows = res.json<Row[]>();
        expect(rows).toHaveLength(expected.size);
        for (const row of rows) {
          const want = expected.get(row[split.name] as string | number)!;
          for (const c of COUNTS) {
            expect(row[c], `${row[split.name]} ${c}`).toBe(want[c]);
          }
          expect(row.revenue).toBe(round4(want.revenue_micros / 1e6));
        }
      });
    }

    it('advertiser report: spend and the gross ratios derive from the sums', async () => {
      const res = await api.client.json(USERS.adv, {
        ...RANGE,
        type: 'advertiser',
        splits: ['advertiser_id'],
        columns: [
          'impressions',
          'clicks',
          'conversions',
          'post_view_conversions',
          'spend',
          'ctr',
          'ccr',
          'gross_cpm',
          'gross_cpc',
          'gross_cpa',
        ],
      });
      const expected = expectedBySplit(ofAdvertiser(), 'advertiser_id');
      const rows = res.json<Row[]>();
      expect(rows.map((r) => r.advertiser_id)).toEqual(ADV_IDS);
      for (const row of rows) {
        const w = expected.get(row.advertiser_id as string)!;
        const impressions = w.unique_impressions + w.reopens;
        const spend = w.spend_micros / 1e6;
        expect(row.impressions).toBe(impressions);
        expect(row.spend).toBe(round4(spend));
        expect(row.ctr).toBe(round4((w.clicks / impressions) * 100));
        expect(row.ccr).toBe(round4((w.conversions / w.clicks) * 100));
        expect(row.gross_cpm).toBe(round4((spend / impressions) * 1000));
        expect(row.gross_cpc).toBe(round4(spend / w.clicks));
        expect(row.gross_cpa).toBe(round4(spend / (w.conversions + w.post_view_conversions)));
      }
    });

    it('columns come in the order requested, after the split, with attributes null where not meaningful', async () => {
      const res = await api.client.json(USERS.adv, {
        ...RANGE,
        type: 'advertiser',
        splits: ['campaign_id'],
        columns: [
          'clicks',
          'campaign_name',
          'advertiser_name',
          'insertion_order_id',
          'strategy_name',
          'publisher_name',
          'campaign_type',
        ],
      });
      const rows = res.json<Row[]>();
      expect(Object.keys(rows[0])).toEqual([
        'campaign_id',
        'clicks',
        'campaign_name',
        'advertiser_name',
        'insertion_order_id',
        'strategy_name',
        'publisher_name',
        'campaign_type',
      ]);
      const campaign = api.system.catalog.campaigns.get(rows[0].campaign_id as string)!;
      expect(rows[0].campaign_name).toBe(campaign.name);
      expect(rows[0].insertion_order_id).toBe(campaign.insertionOrderId);
      expect(rows[0].campaign_type).toBe(campaign.campaignType);
      expect(rows[0].strategy_name).toBeNull();
      expect(rows[0].publisher_name).toBeNull();
    });

    it('totals: (totals) in the split field, summed counts, ratios recomputed from the sums', async () => {
      const res = await api.client.json(USERS.pub, {
        ...RANGE,
        type: 'publisher',
        splits: ['publisher_id'],
        columns: ['impressions', 'clicks', 'ctr', 'revenue', 'net_cpm', 'publisher_name'],
        format: { columnTotals: 'bottom', columnNames: 'top' },
      });
      const rows = res.json<Row[]>();
      expect(rows[0]).toEqual({
        publisher_id: 'publisher_id',
        impressions: 'impressions',
        clicks: 'clicks',
        ctr: 'ctr',
        revenue: 'revenue',
        net_cpm: 'net_cpm',
        publisher_name: 'publisher_name',
      });
      const data = rows.slice(1, -1);
      const totals = rows[rows.length - 1];
      const impressions = data.reduce((s, r) => s + (r.impressions as number), 0);
      const clicks = data.reduce((s, r) => s + (r.clicks as number), 0);
      const micros = ofPublisher().reduce((s, e) => s + e.revenue_micros, 0);
      expect(totals).toEqual({
        publisher_id: '(totals)',
        impressions,
        clicks,
        ctr: round4((clicks / impressions) * 100),
        revenue: round4(micros / 1e6),
        net_cpm: round4((micros / 1e6 / impressions) * 1000),
        publisher_name: null,
      });
    });

    it('sorts by the rules in order, the split value breaking ties; default is the split ascending', async () => {
      const base = {
        ...RANGE,
        type: 'publisher',
        splits: ['ad_slot_id'],
        columns: ['clicks', 'impressions'],
      };
      const byDefault = (await api.client.json(USERS.pub, base)).json<Row[]>();
      const ids = byDefault.map((r) => r.ad_slot_id as string);
      expect(ids).toEqual([...ids].sort());
      const byClicks = (await api.client.json(USERS.pub, { ...base, sort: { clicks: 'desc' } })).json<
        Row[]
      >();
      for (let i = 1; i < byClicks.length; i += 1) {
        const [a, b] = [byClicks[i - 1], byClicks[i]];
        expect(a.clicks as number).toBeGreaterThanOrEqual(b.clicks as number);
        if (a.clicks === b.clicks) {
          expect((a.ad_slot_id as string) < (b.ad_slot_id as string)).toBe(true);
        }
      }
      const defaultDirection = (
        await api.client.json(USERS.pub, { ...base, sort: { impressions: null } })
      ).json<Row[]>();
      expect(defaultDirection.map((r) => r.impressions)).toEqual(
        [...defaultDirection.map((r) => r.impressions as number)].sort((a, b) => b - a),
      );
    });

    it('inexact splits say so, hours are integers 0-23, and inexact totals stay near the exact ones', async () => {
      const res = await api.client.json(USERS.pub, {
        ...RANGE,
        type: 'publisher',
        splits: ['hour'],
        columns: ['unique_impressions', 'clicks'],
      });
      expect(res.headers['x-report-exactness']).toBe('inexact');
      const rows = res.json<Row[]>();
      for (const row of rows) {
        expect(Number.isInteger(row.hour) && (row.hour as number) >= 0 && (row.hour as number) <= 23).toBe(
          true,
        );
      }
      const expected = expectedBySplit(ofPublisher(), 'hour');
      const total = [...expected.values()].reduce((s, c) => s + c.unique_impressions, 0);
      const got = rows.reduce((s, r) => s + (r.unique_impressions as number), 0);
      expect(Math.abs(got - total)).toBeLessThanOrEqual(4 * Math.sqrt(total * 9));
      expect(rows.reduce((s, r) => s + (r.clicks as number), 0)).toBe(
        [...expected.values()].reduce((s, c) => s + c.clicks, 0),
      );
    });

    it('filters combine with AND, an inexact filter makes the report inexact', async () => {
      const res = await api.client.json(USERS.pub, {
        ...RANGE,
        type: 'publisher',
        splits: ['publisher_id'],
        columns: ['clicks'],
        filters: [
          { dimension: 'country', operator: 'equals', values: ['US', 'CA'] },
          { dimension: 'publisher_id', operator: 'not equals', values: ['pub-2'] },
        ],
      });
      expect(res.headers['x-report-exactness']).toBe('inexact');
      const want = expectedBySplit(
        ofPublisher().filter(
          (e) => ['US', 'CA'].includes(e.country) && e.publisher_id !== 'pub-2' && e.ts < '2026-11-22',
        ),
        'publisher_id',
      );
      expect(res.json<Row[]>().map((r) => [r.publisher_id, r.clicks])).toEqual(
        [...want.entries()]
          .sort(([a], [b]) => String(a).localeCompare(String(b)))
          .map(([k, v]) => [k, v.clicks]),
      );
    });

    it('filter values with quotes, backslashes and SQL are plain data: no rows, code 201', async () => {
      const res = await api.client.json(USERS.pub, {
        ...RANGE,
        type: 'publisher',
        splits: ['day'],
        columns: ['clicks'],
        filters: [
          {
            dimension: 'campaign_id',
            operator: 'equals',
            values: ["x' OR '1'='1", 'a\\b', '"; DROP TABLE exact_daily; --'],
          },
        ],
      });
      expect([res.status, res.code, res.json()]).toEqual([200, ReportCode.NoData, []]);
      const after = await api.client.json(USERS.pub, {
        ...RANGE,
        type: 'publisher',
        splits: ['day'],
        columns: ['clicks'],
      });
      expect(after.json<Row[]>()).toHaveLength(10);
    });

    it('a range without data -> 201 and an empty report', async () => {
      const res = await api.client.json(USERS.pub, {
        type: 'publisher',
        startDate: '2025-01-01',
        endDate: '2025-01-31',
        splits: ['day'],
        columns: ['clicks'],
      });
      expect([res.status, res.code, res.json()]).toEqual([200, ReportCode.NoData, []]);
    });

    it('unsupported columns are left out -> 300 with X-Report-Removed', async () => {
      const res = await api.client.json(USERS.adv, {
        ...RANGE,
        type: 'advertiser',
        splits: ['day'],
        columns: ['clicks', 'revenue', 'bogus', 'spend'],
      });
      expect([res.status, res.code, res.headers['x-report-removed']]).toEqual([
        200,
        ReportCode.DimensionsRemoved,
        'revenue,bogus',
      ]);
      expect(Object.keys(res.json<Row[]>()[0])).toEqual(['day', 'clicks', 'spend']);
    });

    it('the advertiser-only variant reads publisher_domain from the inexact tier and drops net metrics', async () => {
      const res = await api.client.json(USERS.lite, {
        ...RANGE,
        splits: ['publisher_domain'],
        columns: ['clicks', 'net_cpm', 'spend'],
      });
      expect([res.code, res.headers['x-report-exactness'], res.headers['x-report-removed']]).toEqual([
        ReportCode.DimensionsRemoved,
        'inexact',
        'net_cpm',
      ]);
    });

    it('relative dates name the same days as explicit ones', async () => {
      const body = { type: 'publisher', splits: ['day'], columns: ['clicks'] };
      const explicit = await api.client.json(USERS.pub, { ...body, ...RANGE });
      const relative = await api.client.json(USERS.pub, {
        ...body,
        startDate: '-10 days',
        endDate: 'yesterday',
      });
      expect(relative.json()).toEqual(explicit.json());
    });

    it('XML in, XML out: repeated elements are arrays, records unwrapped under <root>', async () => {
      const b = api.client.signed(USERS.pub, {});
      const xml = `<?xml version="1.0"?><data><id>${b.id}</id><seed>${b.seed}</seed><hash>${b.hash}</hash><type>publisher</type>
        <startDate>${RANGE.startDate}</startDate><endDate>${RANGE.endDate}</endDate><splits>publisher_id</splits>
        <columns>clicks</columns><columns>publisher_name</columns>
        <filters><dimension>publisher_id</dimension><operator>equals</operator><values>pub-1</values><values>pub-3</values></filters>
        <sort><clicks>desc</clicks></sort><format><columnTotals>bottom</columnTotals></format></data>`;
      const res = await api.client.send(xml, { 'content-type': 'application/xml' });
      expect([res.status, res.headers['content-type']]).toEqual([200, 'application/xml; charset=utf-8']);
      const parsed = new XMLParser({ parseTagValue: false }).parse(res.text);
      expect(Object.keys(parsed)).toContain('root');
      expect(parsed.root.publisher_id).toHaveLength(3);
      expect(parsed.root.publisher_id[2]).toBe('(totals)');
      expect(parsed.root.publisher_name[2]).toBe('');
      const expected = expectedBySplit(
        ofPublisher().filter((e) => ['pub-1', 'pub-3'].includes(e.publisher_id)),
        'publisher_id',
      );
      const clicks = [...expected.values()].map((c) => c.clicks).sort((x, y) => y - x);
      expect(parsed.root.clicks.slice(0, 2).map(Number)).toEqual(clicks);
    });

    it('Accept decides the format; an Accept naming none of ours falls back to the request format', async () => {
      const body = { ...RANGE, type: 'publisher', splits: ['day'], columns: ['clicks'] };
      const xml = await api.client.json(USERS.pub, body, { accept: 'application/xml' });
      expect(xml.text.startsWith('<?xml')).toBe(true);
      const csv = await api.client.json(USERS.pub, body, { accept: 'text/csv' });
      expect(csv.headers['content-type']).toBe('application/json; charset=utf-8');
      const q = await api.client.json(USERS.pub, body, { accept: 'text/html;q=0.5, application/xml;q=0.9' });
      expect(q.headers['content-type']).toBe('application/xml; charset=utf-8');
    });

    it('HTML: a table with names in the head, totals in the foot, values escaped', async () => {
      const res = await api.client.json(
        USERS.pub,
        { ...RANGE, type: 'publisher', splits: ['list_id'], columns: ['clicks'] },
        { accept: 'text/html' },
      );
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<thead><tr><th>list_id</th><th>clicks</th></tr></thead>');
      expect(res.text).toMatch(/<tfoot><tr><td>\(totals\)<\/td><td class="n">\d+<\/td><\/tr><\/tfoot>/);
      expect(res.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(res.text).not.toContain('<script>');
    });

    it('XLSX: typed numeric cells, a bold frozen header row and the totals row', async () => {
      const res = await api.client.json(
        USERS.pub,
        { ...RANGE, type: 'publisher', splits: ['day'], columns: ['impressions', 'ctr', 'revenue'] },
        { accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
      );
      expect(res.status).toBe(200);
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(res.buffer as unknown as ArrayBuffer);
      const sheet = workbook.getWorksheet('Report')!;
      expect(sheet.getRow(1).values).toEqual([undefined, 'day', 'impressions', 'ctr', 'revenue']);
      expect(sheet.getRow(1).font?.bold).toBe(true);
      expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
      expect(sheet.rowCount).toBe(12);
      expect(typeof sheet.getRow(2).getCell(2).value).toBe('number');
      expect(typeof sheet.getRow(2).getCell(3).value).toBe('number');
      expect(sheet.getRow(12).getCell(1).value).toBe('(totals)');
      const expected = [...expectedBySplit(ofPublisher(), 'day').values()].reduce(
        (s, c) => s + c.unique_impressions + c.reopens,
        0,
      );
      expect(sheet.getRow(12).getCell(2).value).toBe(expected);
    });

    it('split values keep their types: year and month are integers, year_month is YYYY MM', async () => {
      // Every click of the range, by each date split: the values as JSON has them, and their clicks.
      const clicksOfRange = ofPublisher().filter(
        (e) =>
          e.type === 'click' && e.ts.slice(0, 10) >= RANGE.startDate && e.ts.slice(0, 10) <= RANGE.endDate,
      ).length;
      expect(clicksOfRange).toBeGreaterThan(0);
      const bySplit = async (split: string) => {
        const res = await api.client.json(USERS.pub, {
          ...RANGE,
          type: 'publisher',
          splits: [split],
          columns: ['clicks'],
        });
        expect(res.status, split).toBe(200);
        return res.json<Row[]>().map((r) => [r[split], r.clicks]);
      };
      expect(await bySplit('year')).toEqual([[2026, clicksOfRange]]);
      expect(await bySplit('month')).toEqual([[11, clicksOfRange]]);
      expect(await bySplit('year_month')).toEqual([['2026 11', clicksOfRange]]);
    });

    it('answers concurrent requests each with its own, correct report', async () => {
      // One request per user: a user's seeds must increase, so one user's parallel requests could race.
      const requests = [
        [USERS.pub, { type: 'publisher', splits: ['country'] }],
        [USERS.pub2, { type: 'publisher', splits: ['day'] }],
        [USERS.adv, { type: 'advertiser', splits: ['campaign_id'] }],
        [USERS.lite, { splits: ['hour'] }],
      ] as const;
      const send = ([user, body]: (typeof requests)[number]) =>
        api.client.json(user, { ...RANGE, ...body, columns: ['clicks', 'impressions'] });
      const serial = [];
      for (const request of requests) {
        serial.push((await send(request)).json());
      }
      const parallel = await Promise.all(requests.map(send));
      expect(parallel.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(parallel.map((r) => r.json())).toEqual(serial);
    });

    it('serves /health and /metrics', async () => {
      const health = await fetch(`${api.baseUrl}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        status: 'ok',
        info: { reportStore: { status: 'up' }, stateStore: { status: 'up' } },
        error: {},
      });
      const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
      expect(metrics).toContain('adx_report_requests_total');
      expect(metrics).toContain('adx_ingested_events_total');
    });
  });
}
