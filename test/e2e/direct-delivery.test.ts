import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_NOW } from '@app/testing';
import { listeningPort } from '@app/runtime';
import { modes, startReporting, USERS, writeTestCatalog, type RunningReporting } from './reporting-system';

/**
 * The demo catalog's booked campaigns served through the ad tag (no DSP: direct demand only) and
 * their delivery read back: from `POST /api/delivery`, signed like `POST /api` and scoped to the
 * account, and from the auction's `/metrics`. Clicks on a clicks goal count once per decision.
 */
const DEMO_QUERY = { list: 'demo-list', email_domain: 'example.com', kv: 'section:news' };
const creativeOf = (location: string | undefined) => location?.split('/creatives/')[1]?.replace('.svg', '');

/** 2026-01-01 to the end of 2027-12-31 in UTC (pub-1 has no time zone): the demo flights. */
const FLIGHT_START = Date.parse('2026-01-01T00:00:00Z');
const FLIGHT_END = Date.parse('2028-01-01T00:00:00Z');

interface DeliveryBody {
  catalogVersion: string;
  bookings: {
    scope: string;
    id: string;
    campaignId: string;
    advertiserName: string;
    pacing: string;
    goals: {
      metric: string;
      lifetime?: number;
      daily?: number;
      deliveredLifetime: number;
      deliveredToday?: number;
      expectedByNow?: number;
    }[];
  }[];
}

for (const mode of modes()) {
  describe(`direct campaigns delivered and shown [${mode}]`, () => {
    let api: RunningReporting;
    let auctionUrl: string;

    const tag = async (
      kind: 'img' | 'click',
      slot: string,
      reader: string,
      extra: Record<string, string> = {},
    ) => {
      const query = new URLSearchParams({ placement: 'drop-1', recipient: reader, ...DEMO_QUERY, ...extra });
      const res = await request(`${auctionUrl}/${kind}/${slot}?${query.toString()}`);
      await res.body.dump();
      return { status: res.statusCode, location: res.headers.location as string | undefined };
    };
    const delivery = async (user: { id: string; token: string }, body: Record<string, unknown> = {}) => {
      const res = await request(`${api.baseUrl}/api/delivery`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...api.client.signed(user, {}), ...body }),
      });
      return { status: res.statusCode, body: (await res.body.json()) as DeliveryBody & { code?: number } };
    };
    const goalOf = (answer: DeliveryBody, campaignId: string, metric: string) =>
      answer.bookings
        .find((b) => b.scope === 'campaign' && b.id === campaignId)
        ?.goals.find((g) => g.metric === metric);

    beforeAll(async () => {
      api = await startReporting(mode, {
        // No DSP: the auction is the catalog's direct demand, whose booked campaigns outbid the rest.
        CATALOG_PATH: writeTestCatalog((doc) => {
          doc.dsps = [];
        }),
      });
      auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it('serves the paced, capped and key-value-targeted bookings on the demo newsletter', async () => {
      expect(creativeOf((await tag('img', 'slot-1-1-1', 'reader-aaaa')).location)).toBe(
        'cr-bk-paced-600x200',
      );
      expect(creativeOf((await tag('img', 'slot-1-1-2', 'reader-aaaa')).location)).toBe(
        'cr-bk-capped-300x250',
      );
      expect(creativeOf((await tag('img', 'slot-1-2-1', 'reader-aaaa')).location)).toBe('cr-bk-kv-728x90');
      // Capped at one an hour: the same reader's next email gets another ad in that slot.
      const next = await tag('img', 'slot-1-1-2', 'reader-aaaa', { placement: 'drop-2' });
      expect(creativeOf(next.location)).not.toBe('cr-bk-capped-300x250');
      // Key-values: a section outside the booked ones, or another list, gets other ads.
      const sports = await tag('img', 'slot-1-2-1', 'reader-bbbb', { kv: 'section:sports' });
      expect(creativeOf(sports.location)).not.toBe('cr-bk-kv-728x90');
      const otherList = await tag('img', 'slot-1-1-1', 'reader-bbbb', { list: 'other-list' });
      expect(creativeOf(otherList.location)).not.toBe('cr-bk-paced-600x200');
    });

    it("shows the roadblock and the takeover on the demo newsletter's Garden Weekly edition", async () => {
      const page = await request(`${auctionUrl}/demo/newsletter?edition=garden&recipient=garden-reader-1`);
      const html = await page.body.text();
      const tags = [...html.matchAll(/<img src="([^"]*\/img\/[^"]*)"/g)].map((m) =>
        m[1].replaceAll('&amp;', '&'),
      );
      expect(tags.map((t) => new URL(t).pathname)).toEqual([
        '/img/slot-2-1-1',
        '/img/slot-2-1-2',
        '/img/slot-2-2-1',
        '/img/slot-2-2-2',
      ]);
      const shown = [];
      for (const tag of tags) {
        const res = await request(tag);
        await res.body.dump();
        shown.push(creativeOf(res.headers.location as string));
      }
      expect(shown).toEqual([
        'cr-bk-roadblock-600x200',
        'cr-bk-roadblock-300x250',
        'cr-bk-takeover-728x90',
        'cr-bk-takeover-320x50',
      ]);
    });

    it('counts a clicks goal from the click redirect, once per decision', async () => {
      const first = await tag('click', 'slot-1-1-2', 'reader-aaaa');
      expect(first.location).toBe('https://www.acmeoutdoor.com/winter-sale');
      // The same reader clicking the same ad again, and once more on a reopen: the same decision.
      await tag('click', 'slot-1-1-2', 'reader-aaaa');
      await tag('img', 'slot-1-1-2', 'reader-aaaa');
      await tag('click', 'slot-1-1-2', 'reader-aaaa');
      // Another reader: a decision, a click of its own.
      expect(creativeOf((await tag('img', 'slot-1-1-2', 'reader-cccc')).location)).toBe(
        'cr-bk-capped-300x250',
      );
      await tag('click', 'slot-1-1-2', 'reader-cccc');

      const answer = await delivery(USERS.adv);
      expect(answer.status).toBe(200);
      expect(goalOf(answer.body, 'cmp-bk-capped', 'clicks')).toMatchObject({
        lifetime: 500,
        deliveredLifetime: 2,
      });
      // No daily target: no day counted (it would cost every delivery a write).
      expect(goalOf(answer.body, 'cmp-bk-capped', 'clicks')).not.toHaveProperty('deliveredToday');
    });

    it("answers each account's bookings with delivery against goal and pace", async () => {
      const media = await delivery(USERS.adv);
      expect(media.status).toBe(200);
      expect(media.body.catalogVersion).toBe(api.system.catalogs.version);
      // Helios Media Group: Bright Bank, Acme Outdoor and Cedar Furniture; not the other group's.
      expect(new Set(media.body.bookings.map((b) => b.campaignId))).toEqual(
        new Set(['cmp-bk-paced', 'cmp-bk-capped', 'cmp-bk-kv']),
      );
      const paced = goalOf(media.body, 'cmp-bk-paced', 'impressions')!;
      // One impression: reader-aaaa's; reader-bbbb was on another list.
      expect(paced).toMatchObject({
        lifetime: 1_000_000,
        daily: 2400,
        deliveredLifetime: 1,
        deliveredToday: 1,
      });
      const share = (FIXED_NOW.getTime() - FLIGHT_START) / (FLIGHT_END - FLIGHT_START);
      expect(paced.expectedByNow).toBe(Math.round(1_000_000 * share));
      expect(goalOf(media.body, 'cmp-bk-kv', 'impressions')).toMatchObject({ deliveredLifetime: 1 });

      // The Morning Ledger's and Garden Weekly's owner sees every booking on its inventory alone.
      const publisher = await delivery(USERS.pub);
      expect(new Set(publisher.body.bookings.map((b) => b.campaignId))).toEqual(
        new Set(['cmp-bk-paced', 'cmp-bk-capped', 'cmp-bk-kv', 'cmp-bk-roadblock', 'cmp-bk-takeover']),
      );
      // The other publisher account: none of them.
      expect((await delivery(USERS.pub2)).body.bookings).toEqual([]);
    });

    it('refuses a request that is not signed right, with its code', async () => {
      const res = await request(`${api.baseUrl}/api/delivery`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...api.client.signed(USERS.adv, {}), hash: '0'.repeat(40) }),
      });
      const text = await res.body.text();
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(text).toContain('31');
      const missing = await request(`${api.baseUrl}/api/delivery`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(missing.statusCode).toBeGreaterThanOrEqual(400);
      expect(await missing.body.text()).toContain('10');
    });

    it('shows delivery, goal and expected-by-now in the metrics', async () => {
      const text = await (await request(`${auctionUrl}/metrics`)).body.text();
      const value = (series: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${series} `));
        return line === undefined ? undefined : Number(line.split(' ').pop());
      };
      expect(
        value('adx_booking_delivered{scope="campaign",id="cmp-bk-capped",metric="clicks",period="lifetime"}'),
      ).toBe(2);
      expect(
        value('adx_booking_goal{scope="campaign",id="cmp-bk-paced",metric="impressions",period="daily"}'),
      ).toBe(2400);
      expect(
        value('adx_booking_expected_by_now{scope="campaign",id="cmp-bk-paced",metric="impressions"}'),
      ).toBe(Math.round((1_000_000 * (FIXED_NOW.getTime() - FLIGHT_START)) / (FLIGHT_END - FLIGHT_START)));
      expect(value(`adx_catalog_info{version="${api.system.catalogs.version}"}`)).toBe(1);
    });
  });
}
