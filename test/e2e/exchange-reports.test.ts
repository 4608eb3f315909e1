import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { FIXED_NOW, validateBidRequestAgainstSchema } from '@app/testing';
import { modes, startReporting, USERS, writeTestCatalog, type RunningReporting } from './reporting-system';
import { listeningPort } from '@app/runtime';

/** Traffic is sent two days before the reports' "today": reports cover only closed days. */
const TRAFFIC_DAY = '2026-11-20';
const SLOT = 'slot-2-1-2'; // pub-2 (demo-pub), 300x250, floor 0.75, exchange share 0.2
/** Alpha bids 5.00 from seat alpha-1 (adv-1's exchange campaign cmp-1-2-1), beta 3.00. */
const ALPHA_CPM = 5;
const BETA_CPM = 3;
/** Second price: beta's 3.00 beats the best direct 300x250 CPM (2.40), plus one cent. */
const CLEARING_MICROS = 3_010_000;
const SPEND = CLEARING_MICROS / 1000;
const REVENUE = Math.round(SPEND * 0.8);
const TMAX_MS = 1000;

type Row = Record<string, string | number | null>;

for (const mode of modes()) {
  describe(`exchange: ad tag traffic through the auction counted in the reports [${mode}]`, () => {
    let api: RunningReporting;
    let alpha: DspSimulator;
    let beta: DspSimulator;
    let auctionUrl: string;
    let now = new Date(`${TRAFFIC_DAY}T09:00:00.000Z`);

    const get = async (path: string, headers: Record<string, string> = {}) => {
      const res = await request(`${auctionUrl}${path}`, { headers });
      await res.body.dump();
      return { status: res.statusCode, headers: res.headers };
    };
    const tag = (recipient: string) =>
      `placement=plc-e2e-1&list=list-e2e&recipient=${recipient}&email_domain=example.com&kv=topic:gardening&age=25-34&gender=female`;
    const reader = (i: number) => `reader-${String(i).padStart(4, '0')}`;

    beforeAll(async () => {
      alpha = await DspSimulator.start({
        seat: 'alpha-1',
        priceCpm: { min: ALPHA_CPM, max: ALPHA_CPM },
        nurl: true,
      });
      beta = await DspSimulator.start({ seat: 'beta-1', priceCpm: { min: BETA_CPM, max: BETA_CPM } });
      const catalog = writeTestCatalog((doc) => {
        doc.dsps[0].endpoint = alpha.bidUrl;
        doc.dsps[1].endpoint = beta.bidUrl;
        // A hand count needs every answer in time, also on a loaded CI machine.
        for (const dsp of doc.dsps) {
          dsp.timeoutMs = TMAX_MS;
        }
      });
      api = await startReporting(
        mode,
        { CATALOG_PATH: catalog, AUCTION_TMAX_MS: String(TMAX_MS) },
        () => now,
      );
      auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;

      // 20 readers open the email: 20 auctions, 20 unique impressions.
      for (let i = 0; i < 20; i += 1) {
        expect((await get(`/img/${SLOT}?${tag(reader(i))}&cb=${i}`)).status).toBe(302);
      }
      // 8 of them open it again: reopens, no new auction.
      for (let i = 0; i < 8; i += 1) {
        expect((await get(`/img/${SLOT}?${tag(reader(i))}&cb=r${i}`)).status).toBe(302);
      }
      // 5 click (readers 10-14).
      for (let i = 10; i < 15; i += 1) {
        expect((await get(`/click/${SLOT}?${tag(reader(i))}`)).status).toBe(302);
      }
      now = new Date(`${TRAFFIC_DAY}T12:00:00.000Z`);
      // 3 clickers convert (post-click), 2 viewers who did not click convert (post-view), one stranger does not count.
      for (const i of [10, 11, 12]) {
        await get(`/conv/adv-1?recipient=${reader(i)}&order=o-${i}`);
      }
      await get(`/conv/adv-1?recipient=${reader(12)}&order=o-12`); // the same order again: counted once
      for (const i of [1, 2]) {
        await get(`/conv/adv-1?recipient=${reader(i)}`);
      }
      await get(`/conv/adv-1?recipient=${reader(99)}`);
      await api.system.settle();
      now = FIXED_NOW;
    }, 120_000);

    afterAll(async () => {
      await api?.system.close();
      await alpha?.close();
      await beta?.close();
    });

    it('sends every DSP an OpenRTB 2.5 request that the public schema accepts', () => {
      expect(alpha.requests).toHaveLength(20);
      expect(beta.requests).toHaveLength(20);
      for (const received of [...alpha.requests, ...beta.requests]) {
        expect(received.headers['x-openrtb-version']).toBe('2.5');
        expect(validateBidRequestAgainstSchema(received.body)).toEqual([]);
      }
      const sent = alpha.requests[0].body as any;
      expect(sent.imp[0]).toMatchObject({ tagid: SLOT, bidfloor: 0.75, banner: { w: 300, h: 250 } });
      expect(sent).toMatchObject({ at: 2, tmax: TMAX_MS, site: { publisher: { id: 'pub-2' } } });
    });

    it('gives the same recipient the same user id, and never the recipient hash itself', () => {
      const ids = alpha.requests.map((r) => (r.body as any).user.id as string);
      expect(new Set(ids).size).toBe(20);
      expect(ids.some((id) => id.includes('reader-'))).toBe(false);
      expect((beta.requests[0].body as any).user.id).toBe(ids[0]);
    });

    it('sends the winner a win notice with the clearing price substituted', () => {
      expect(alpha.wins).toHaveLength(20);
      expect(alpha.wins[0].query.price).toBe('3.01');
      expect(alpha.trackerHits.filter((h) => h.kind === 'imp')).toHaveLength(20);
    });

    it('counts views, reopens, clicks and conversions in the publisher report, to the unit', async () => {
      const res = await api.client.json(USERS.pub, {
        type: 'publisher',
        startDate: TRAFFIC_DAY,
        endDate: TRAFFIC_DAY,
        splits: ['ad_slot_id'],
        columns: [
          'impressions',
          'unique_impressions',
          'reopens',
          'clicks',
          'conversions',
          'post_view_conversions',
          'revenue',
        ],
        filters: [{ dimension: 'ad_slot_id', operator: 'equals', values: [SLOT] }],
      });
      expect(res.status).toBe(200);
      expect(res.json<Row[]>()).toEqual([
        {
          ad_slot_id: SLOT,
          impressions: 28,
          unique_impressions: 20,
          reopens: 8,
          clicks: 5,
          conversions: 3,
          post_view_conversions: 2,
          revenue: Math.round((20 * REVENUE) / 100) / 1e4,
        },
      ]);
    });

    it("books the spend on the seat's campaign with its demand type in the advertiser report", async () => {
      const res = await api.client.json(USERS.adv, {
        type: 'advertiser',
        startDate: TRAFFIC_DAY,
        endDate: TRAFFIC_DAY,
        splits: ['campaign_id'],
        columns: ['demand_type', 'campaign_type', 'unique_impressions', 'clicks', 'spend'],
      });
      expect(res.status).toBe(200);
      expect(res.json<Row[]>()).toEqual([
        {
          campaign_id: 'cmp-1-2-1',
          demand_type: 'exchange',
          campaign_type: 'takeover',
          unique_impressions: 20,
          clicks: 5,
          spend: (20 * SPEND) / 1e6,
        },
      ]);
    });

    it("reports the tag's dimensions in the inexact splits", async () => {
      const res = await api.client.json(USERS.pub, {
        type: 'publisher',
        startDate: TRAFFIC_DAY,
        endDate: TRAFFIC_DAY,
        splits: ['list_id'],
        columns: ['clicks'],
      });
      expect(res.json<Row[]>()).toEqual([{ list_id: 'list-e2e', clicks: 5 }]);
    });
  });
}
