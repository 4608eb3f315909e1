import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Response, Route } from 'playwright-core';
import { createCanvas, loadImage, type Image } from '@napi-rs/canvas';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator, LANDING_PAGE_TITLE } from '@app/dsp-simulator';
import { FIXED_NOW } from '@app/testing';
import { artifactPath, chromiumAvailable, launchChromium } from '../support/browser';
import {
  startReporting,
  USERS,
  writeTestCatalog,
  type Mode,
  type RunningReporting,
} from './reporting-system';

/** The browser's traffic is dated two days before the reports' "today": reports cover only closed days. */
const TRAFFIC_DAY = '2026-11-20';
const DAILY = 'The Morning Ledger Daily edition';
const WEEKEND = 'The Morning Ledger Weekend special';
/** The four slots of pub-1 (The Morning Ledger, demo-pub) that the demo newsletter embeds, in page order. */
const SLOTS = [
  { id: 'slot-1-1-1', section: DAILY, w: 600, h: 200, native: false },
  { id: 'slot-1-1-2', section: DAILY, w: 300, h: 250, native: false },
  { id: 'slot-1-1-3', section: DAILY, w: 300, h: 250, native: true },
  { id: 'slot-1-2-1', section: WEEKEND, w: 728, h: 90, native: false },
] as const;
type Slot = (typeof SLOTS)[number];
const SLOT_IDS = SLOTS.map((s) => s.id);
const BANNERS = SLOTS.filter((s) => !s.native);
/** The banner the reader clicks, the native slot (clicked too), and the slot the webmail proxy asks for. */
const [, CLICKED, NATIVE, PROXIED] = SLOTS;
/** Alpha's real native ad: title, texts and main image, which the exchange flattens into one PNG. */
const NATIVE_CRID = 'alpha-1-native';
const READER = 'browser-reader-0001';
/** Another recipient of the same newsletter, read in the same browser: new decisions, new auctions. */
const OTHER_READER = 'browser-reader-0002';
/** A recipient never seen together with our cookie. */
const STRANGER = 'proxy-reader-never-synced';
/** Gmail's image proxy fetches the images of a mail without the reader's cookies. */
const GMAIL_PROXY_UA =
  'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
/**
 * Both DSPs outbid every direct campaign (2.40 at most); alpha wins every slot, the native one
 * included (beta answers it with a static ad), at beta's price plus a cent.
 */
const ALPHA_CPM = 9;
const BETA_CPM = 8;
const CLEARING_MICROS = 8_010_000;
const SPEND = CLEARING_MICROS / 1000;
const REVENUE = Math.round(SPEND * 0.7); // pub-1's exchange share is 0.3
/**
 * The auction's budget for the DSPs (catalog 120 ms, tmax 150 ms) raised to its maximum: the
 * simulators share this process's event loop with the auction and the browser driver, and on a
 * busy machine an answer sent at once can arrive late, leaving the slot to direct demand. The
 * native ad's main image gets a generous budget too, for the same reason.
 */
const DSP_BUDGET_MS = 1000;
const NATIVE_IMAGE_BUDGET_MS = 5000;
/** The redirects of a user sync chain the test accepts before calling it a loop. */
const MAX_SYNC_HOPS = 12;

type Row = Record<string, string | number | null>;

/** What the page reports of one image; the DOM types are not in this project's `lib`. */
interface ImageState {
  slot: string | null;
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
}
interface ImageElement {
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
  closest(selector: string): { getAttribute(name: string): string | null } | null;
}

interface SeenResponse {
  url: string;
  status: number;
  location?: string;
  contentType?: string;
  response: Response;
}

/**
 * A free loopback port for the auction: the ad tags of the demo page are built from
 * AUCTION_PUBLIC_URL, which must name the port the auction really listens on.
 */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(bytes: Buffer): { w: number; h: number } {
  expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { w: bytes.readUInt32BE(16), h: bytes.readUInt32BE(20) };
}

/** Micro-USD as the report shows them: USD to four decimals. */
const usd = (micros: number) => Math.round(micros / 100) / 1e4;

// A browser check of the page served by the auction app: the embedded adapters are enough.
for (const mode of ['embedded'] as Mode[]) {
  describe.skipIf(!chromiumAvailable())(`demo newsletter in a real browser [${mode}]`, () => {
    let api: RunningReporting;
    let alpha: DspSimulator;
    let beta: DspSimulator;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let auctionUrl: string;
    let now = new Date(`${TRAFFIC_DAY}T09:00:00.000Z`);
    /** Every response the browser got, redirects included, in order. */
    const responses: SeenResponse[] = [];
    /** How many of them the first load of READER's newsletter brought. */
    let firstLoad = 0;
    /** The sync pixel's answer on that first load. */
    let firstPixel: Response;

    const pageUrl = (recipient: string) => `${auctionUrl}/demo/newsletter?recipient=${recipient}`;
    const tagResponses = (slot: Slot) =>
      responses.filter((r) => r.url.startsWith(`${auctionUrl}/img/${slot.id}?`));
    /** Where an element is on the whole page (a full-page screenshot's coordinates), in CSS pixels. */
    const boxOf = (selector: string): Promise<Box> =>
      page.locator(selector).evaluate((element) => {
        const rect = element.getBoundingClientRect();
        // In the browser: the test's TypeScript has no DOM library.
        const view = globalThis as unknown as { scrollX: number; scrollY: number };
        return {
          x: Math.round(rect.left + view.scrollX),
          y: Math.round(rect.top + view.scrollY),
          w: Math.round(rect.width),
          h: Math.round(rect.height),
        };
      });
    /** The sync chain's steps among responses: ours (`/sync`, `/s/...`) and each simulator's `/sync`. */
    const syncSteps = (seen: readonly SeenResponse[]) =>
      seen.flatMap((r) => {
        const url = new URL(r.url);
        const ours =
          url.origin === auctionUrl && (url.pathname === '/sync' || url.pathname.startsWith('/s/'));
        const owner = ours
          ? 'exchange'
          : url.origin === alpha.url
            ? 'alpha'
            : url.origin === beta.url
              ? 'beta'
              : '';
        if (!owner || (!ours && url.pathname !== '/sync')) {
          return [];
        }
        return [{ step: `${owner} ${url.pathname}`, status: r.status, url, location: r.location }];
      });

    beforeAll(async () => {
      alpha = await DspSimulator.start({
        seat: 'alpha-1',
        priceCpm: { min: ALPHA_CPM, max: ALPHA_CPM },
        nurl: true,
        native: 'real',
      });
      beta = await DspSimulator.start({
        seat: 'beta-1',
        priceCpm: { min: BETA_CPM, max: BETA_CPM },
        native: 'static',
      });
      const catalog = writeTestCatalog((doc) => {
        doc.dsps[0].endpoint = alpha.bidUrl;
        doc.dsps[0].syncUrl = alpha.syncUrl;
        doc.dsps[1].endpoint = beta.bidUrl;
        doc.dsps[1].syncUrl = beta.syncUrl;
        for (const dsp of doc.dsps) {
          dsp.timeoutMs = DSP_BUDGET_MS;
        }
      });
      const port = await freePort();
      auctionUrl = `http://127.0.0.1:${port}`;
      api = await startReporting(
        mode,
        {
          CATALOG_PATH: catalog,
          AUCTION_PORT: String(port),
          AUCTION_PUBLIC_URL: auctionUrl,
          AUCTION_TMAX_MS: String(DSP_BUDGET_MS),
          // The simulators, which serve the native ad's main image, are on loopback.
          DSP_URL_ALLOW_PRIVATE: '1',
          NATIVE_IMAGE_TIMEOUT_MS: String(NATIVE_IMAGE_BUDGET_MS),
        },
        () => now,
      );

      browser = await launchChromium();
      context = await browser.newContext({ viewport: { width: 900, height: 900 } });
      context.on('response', (response) => {
        const headers = response.headers();
        responses.push({
          url: response.url(),
          status: response.status(),
          location: headers.location,
          contentType: headers['content-type'],
          response,
        });
      });
      page = await context.newPage();
      // The first load is a browser we have never seen: its sync pixel must come without our
      // cookie. The ad tags' answers set that cookie too, and a renderer slow to ask for the pixel
      // (a busy machine) sends it with the cookie of an ad tag that has already answered: the
      // pixel then starts the sync chain on this load. So this load's ad tags wait until the pixel
      // has answered (they then carry the cookie it set).
      const pixelAnswered = page.waitForResponse((r) => r.url().startsWith(`${auctionUrl}/sync?`));
      const adTag = (url: URL) => url.href.startsWith(`${auctionUrl}/img/`);
      const afterThePixel = async (route: Route) => {
        await pixelAnswered;
        await route.continue();
      };
      await page.route(adTag, afterThePixel);
      const opened = await page.goto(pageUrl(READER), { waitUntil: 'load' });
      expect(opened?.status()).toBe(200);
      firstPixel = await pixelAnswered;
      await page.unroute(adTag, afterThePixel);
      firstLoad = responses.length;
    }, 30_000);

    afterAll(async () => {
      await browser?.close();
      await api?.system.close();
      await alpha?.close();
      await beta?.close();
    });

    it('shows the newsletter with one section per demo slot, each with its ad tag, and the sync pixel', async () => {
      expect(await page.title()).toBe('Demo newsletter');
      await expect(page.locator('h1').textContent()).resolves.toBe('The Morning Ledger — demo edition');
      const sections = page.locator('section[data-slot]');
      expect(await sections.count()).toBe(SLOTS.length);
      for (const [i, slot] of SLOTS.entries()) {
        const section = sections.nth(i);
        expect(await section.getAttribute('data-slot')).toBe(slot.id);
        expect(await section.locator('h2').textContent()).toBe(slot.section);
        expect(await section.locator('.meta').textContent()).toContain(`${slot.w}x${slot.h}`);
        const link = section.locator('a');
        expect(await link.getAttribute('href')).toMatch(new RegExp(`^${auctionUrl}/click/${slot.id}\\?`));
        expect(await link.locator('img').getAttribute('src')).toMatch(
          new RegExp(`^${auctionUrl}/img/${slot.id}\\?.*recipient=${READER}`),
        );
      }
      await expect(page.locator('section[data-slot="slot-1-1-3"] .meta').textContent()).resolves.toContain(
        'Native',
      );
      const sync = page.locator('img[data-role="user-sync"]');
      expect(await sync.count()).toBe(1);
      expect(await sync.getAttribute('src')).toBe(`${auctionUrl}/sync?recipient=${READER}`);
      expect([await sync.getAttribute('width'), await sync.getAttribute('height')]).toEqual(['1', '1']);
    });

    it("loads every ad image at its slot's size: alpha's banners, and its native ad flattened into our PNG", async () => {
      const images = await page.$$eval('section[data-slot] img', (elements) =>
        (elements as unknown as ImageElement[]).map((img): ImageState => ({
          slot: img.closest('section')?.getAttribute('data-slot') ?? null,
          complete: img.complete,
          naturalWidth: img.naturalWidth,
          naturalHeight: img.naturalHeight,
        })),
      );
      expect(images).toEqual(
        SLOTS.map((slot) => ({ slot: slot.id, complete: true, naturalWidth: slot.w, naturalHeight: slot.h })),
      );
      for (const slot of BANNERS) {
        const tag = tagResponses(slot);
        expect(tag, `one ad request for ${slot.id}`).toHaveLength(1);
        expect(tag[0]).toMatchObject({
          status: 302,
          location: `${alpha.url}/creative/${slot.w}x${slot.h}.svg?crid=alpha-1-${slot.w}x${slot.h}`,
        });
        expect(responses.find((r) => r.url === tag[0].location)).toMatchObject({
          status: 200,
          contentType: 'image/svg+xml',
        });
      }
      // The native slot: not alpha's main image, nor beta's static ad, but our flattened ad.
      const tag = tagResponses(NATIVE);
      expect(tag, 'one ad request for the native slot').toHaveLength(1);
      expect(tag[0].status).toBe(302);
      expect(tag[0].location).toMatch(new RegExp(`^${auctionUrl}/native/[A-Za-z0-9_-]+\\.png$`));
      const png = responses.find((r) => r.url === tag[0].location)!;
      expect(png).toMatchObject({ status: 200, contentType: 'image/png' });
      expect(pngSize(await png.response.body())).toEqual({ w: NATIVE.w, h: NATIVE.h });
    });

    it('saves a full-page screenshot for people to look at, which shows the page whole and our flattened native ad in its slot', async () => {
      const file = artifactPath('demo-newsletter.png');
      const shot = await loadImage(await page.screenshot({ path: file, fullPage: true }));
      const whole = await page.evaluate(() => {
        const { documentElement } = (
          globalThis as unknown as {
            document: { documentElement: { scrollWidth: number; scrollHeight: number } };
          }
        ).document;
        return { width: documentElement.scrollWidth, height: documentElement.scrollHeight };
      });
      expect([shot.width, shot.height]).toEqual([whole.width, whole.height]);
      const pixels = rgbaOf(shot);

      // The native slot's picture, where the page lays it out, is the PNG the exchange served.
      const tag = tagResponses(NATIVE)[0];
      const served = await loadImage(await responses.find((r) => r.url === tag.location)!.response.body());
      const box = await boxOf(`section[data-slot="${NATIVE.id}"] img`);
      expect([box.w, box.h]).toEqual([NATIVE.w, NATIVE.h]);
      expect(meanDifference(pixels, shot.width, box, rgbaOf(served))).toBeLessThan(4);
      // Each banner's place is drawn on, not left blank.
      for (const slot of BANNERS) {
        const banner = await boxOf(`section[data-slot="${slot.id}"] img`);
        expect([banner.w, banner.h], slot.id).toEqual([slot.w, slot.h]);
        expect(coloursIn(pixels, shot.width, banner), slot.id).toBeGreaterThan(2);
      }
    });

    it("takes the reader who clicks an ad to the advertiser's landing page, in a new tab", async () => {
      const link = page.locator(`section[data-slot="${CLICKED.id}"] a`);
      expect(await link.getAttribute('target')).toBe('_blank');
      const [landing] = await Promise.all([context.waitForEvent('page'), link.click()]);
      await landing.waitForLoadState('load');

      const url = new URL(landing.url());
      expect(url.origin).toBe(alpha.url);
      expect(url.pathname).toBe('/landing');
      expect(url.searchParams.get('crid')).toBe(`alpha-1-${CLICKED.w}x${CLICKED.h}`);
      expect(url.searchParams.get('imp')).toMatch(/^[^$]+$/); // ${AUCTION_IMP_ID} substituted
      expect(await landing.title()).toBe(LANDING_PAGE_TITLE);
      const text = await landing.locator('body').innerText();
      expect(text).toContain(LANDING_PAGE_TITLE);
      expect(text).toContain(`creative alpha-1-${CLICKED.w}x${CLICKED.h}`);

      // Through the exchange's click redirect, which is what counts the click.
      const click = responses.filter((r) => r.url.startsWith(`${auctionUrl}/click/${CLICKED.id}?`));
      expect(click).toHaveLength(1);
      expect(click[0]).toMatchObject({ status: 302, location: landing.url() });
      await landing.close();
    });

    it("takes the reader who clicks the native ad to its link, and fires the native ad's trackers", async () => {
      const link = page.locator(`section[data-slot="${NATIVE.id}"] a`);
      const [landing] = await Promise.all([context.waitForEvent('page'), link.click()]);
      await landing.waitForLoadState('load');

      const url = new URL(landing.url());
      expect(url.origin + url.pathname).toBe(`${alpha.url}/landing`);
      expect(url.searchParams.get('crid')).toBe(NATIVE_CRID);
      expect(url.searchParams.get('imp')).toMatch(/^[^$]+$/);
      expect(await landing.title()).toBe(LANDING_PAGE_TITLE);
      expect(await landing.locator('body').innerText()).toContain(`creative ${NATIVE_CRID}`);
      const click = responses.filter((r) => r.url.startsWith(`${auctionUrl}/click/${NATIVE.id}?`));
      expect(click).toHaveLength(1);
      expect(click[0]).toMatchObject({ status: 302, location: landing.url() });
      await landing.close();

      // The native response's imptrackers on the view, its link's clicktrackers on the click.
      await api.system.settle();
      const auction = (alpha.requests.find((r) => (r.body as any).imp[0].tagid === NATIVE.id)!.body as any)
        .id;
      const native = alpha.trackerHits.filter((h) => h.query.crid === NATIVE_CRID || h.query.tracker);
      const imps = native.filter((h) => h.kind === 'imp');
      expect(imps).toHaveLength(2);
      for (const hit of imps) {
        expect(hit.query.auction).toBe(auction);
      }
      expect(imps.map((h) => h.query.tracker ?? h.query.crid).sort()).toEqual([NATIVE_CRID, 'verification']);
      const clicks = alpha.trackerHits.filter((h) => h.kind === 'click');
      expect(clicks).toHaveLength(1);
      expect(clicks[0].query).toMatchObject({ auction, crid: NATIVE_CRID, imp: url.searchParams.get('imp') });
    });

    it('ran one auction per slot, won by alpha, with a win notice and impression trackers each', async () => {
      await api.system.settle();
      for (const dsp of [alpha, beta]) {
        expect(dsp.requests.map((r) => (r.body as any).imp[0].tagid).sort()).toEqual(SLOT_IDS);
      }
      // The native slot asks for a native ad only, in the form each DSP chose in the catalog.
      const toAlpha = alpha.requests.find((r) => (r.body as any).imp[0].tagid === NATIVE.id)!.body as any;
      expect(toAlpha.imp[0].banner).toBeUndefined();
      expect(toAlpha.imp[0].native.ver).toBe('1.1');
      const toBeta = beta.requests.find((r) => (r.body as any).imp[0].tagid === NATIVE.id)!.body as any;
      expect(typeof toBeta.imp[0].native.request).toBe('string');
      expect(alpha.wins.map((w) => w.query.price)).toEqual(SLOTS.map(() => '8.01'));
      // One tracker in each banner's markup, two in the native ad.
      expect(alpha.trackerHits.filter((h) => h.kind === 'imp')).toHaveLength(BANNERS.length + 2);
      expect(beta.wins).toHaveLength(0);
      expect(beta.trackerHits).toHaveLength(0);
    });

    it("syncs the browser's user with both DSPs from the sync pixel, then sends each its buyeruid", async () => {
      // The first load had no cookie: the pixel only set ours, and no DSP was asked.
      expect(await firstPixel.request().headerValue('cookie')).toBeNull();
      const firstSync = syncSteps(responses.slice(0, firstLoad));
      expect(firstSync.map(({ step, status }) => [step, status])).toEqual([['exchange /sync', 200]]);
      expect(responses.find((r) => r.url === `${auctionUrl}/sync?recipient=${READER}`)?.contentType).toBe(
        'image/gif',
      );
      expect(alpha.syncs).toHaveLength(0);
      expect(beta.syncs).toHaveLength(0);
      const ours = (await context.cookies(auctionUrl)).find((c) => c.name === 'exchange_uuid');
      expect(ours).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
      const uuid = ours!.value;
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

      // The reload carries it: the pixel leads the browser through each DSP and back, then stops.
      const beforeReload = responses.length;
      const reloaded = await page.reload({ waitUntil: 'load' });
      expect(reloaded?.status()).toBe(200);
      const chain = syncSteps(responses.slice(beforeReload));
      expect(chain.length).toBeLessThanOrEqual(MAX_SYNC_HOPS);
      expect(chain.map(({ step, status }) => [step, status])).toEqual([
        ['exchange /sync', 302],
        ['alpha /sync', 302],
        ['exchange /s/1001', 302],
        ['exchange /sync', 302],
        ['beta /sync', 302],
        ['exchange /s/1002', 302],
        ['exchange /sync', 200],
      ]);
      // Each hop's Location is the next hop.
      for (let i = 0; i + 1 < chain.length; i++) {
        expect(chain[i].location).toBe(chain[i + 1].url.href);
      }
      expect(chain[0].url.searchParams.get('recipient')).toBe(READER);
      const [alphaSync] = alpha.syncs;
      const [betaSync] = beta.syncs;
      expect(alpha.syncs).toHaveLength(1);
      expect(beta.syncs).toHaveLength(1);
      expect(alphaSync).toMatchObject({
        exchangeUuid: uuid,
        bidderId: 'dsp-alpha',
        callbackUrl: `${auctionUrl}/s/1001`,
        status: 302,
        matched: true,
      });
      expect(betaSync).toMatchObject({
        exchangeUuid: uuid,
        bidderId: 'dsp-beta',
        callbackUrl: `${auctionUrl}/s/1002`,
        status: 302,
        matched: true,
      });
      expect(alpha.issuedUid(alphaSync.dspUid)).toBe(true);
      expect(beta.issuedUid(betaSync.dspUid)).toBe(true);
      expect(Object.fromEntries(chain[1].url.searchParams)).toEqual({
        exchange_uuid: uuid,
        bidder_id: 'dsp-alpha',
        callback_url: `${auctionUrl}/s/1001`,
      });
      expect(Object.fromEntries(chain[2].url.searchParams)).toEqual({
        bidder_id: 'dsp-alpha',
        bidder_uuid: alphaSync.dspUid,
      });
      expect(Object.fromEntries(chain[5].url.searchParams)).toEqual({
        bidder_id: 'dsp-beta',
        bidder_uuid: betaSync.dspUid,
      });
      // The reload reopened READER's ads (no new auction) and kept the browser's user.
      for (const dsp of [alpha, beta]) {
        expect(dsp.requests).toHaveLength(SLOTS.length);
      }
      expect((await context.cookies(auctionUrl)).find((c) => c.name === 'exchange_uuid')?.value).toBe(uuid);

      // Another recipient in the same browser: new decisions, so new auctions, each with the DSP's id.
      const [alphaSeen, betaSeen, beforeOther] = [
        alpha.requests.length,
        beta.requests.length,
        responses.length,
      ];
      const other = await page.goto(pageUrl(OTHER_READER), { waitUntil: 'load' });
      expect(other?.status()).toBe(200);
      for (const [dsp, seen, uid] of [
        [alpha, alphaSeen, alphaSync.dspUid],
        [beta, betaSeen, betaSync.dspUid],
      ] as const) {
        const asked = dsp.requests.slice(seen).map((r) => r.body as any);
        expect(asked.map((b) => b.imp[0].tagid).sort()).toEqual(SLOT_IDS);
        for (const body of asked) {
          expect(body.user.buyeruid).toBe(uid);
        }
      }
      // Every DSP is matched: the pixel answers at once, and no DSP is asked again.
      const again = syncSteps(responses.slice(beforeOther));
      expect(again.map(({ step, status }) => [step, status])).toEqual([['exchange /sync', 200]]);
      expect([alpha.syncs.length, beta.syncs.length]).toEqual([1, 1]);

      // A webmail proxy sends no cookie; the recipient that the sync pixel carried was bound to our user.
      const proxied = async (slotId: string, placement: string, recipient: string) => {
        const query = new URLSearchParams({
          placement,
          list: 'demo-list',
          recipient,
          email_domain: 'example.com',
        });
        const res = await request(`${auctionUrl}/img/${slotId}?${query.toString()}`, {
          headers: { 'user-agent': GMAIL_PROXY_UA },
        });
        await res.body.dump();
        expect(res.statusCode).toBe(302);
        expect(String(res.headers['set-cookie'])).not.toContain(uuid); // no cookie was sent
        return [alpha.requests.at(-1)!.body as any, beta.requests.at(-1)!.body as any];
      };
      const [alphaBound, betaBound] = await proxied(PROXIED.id, 'demo-webmail-proxy', READER);
      expect(alphaBound.imp[0].tagid).toBe(PROXIED.id);
      expect(alphaBound.user.buyeruid).toBe(alphaSync.dspUid);
      expect(betaBound.user.buyeruid).toBe(betaSync.dspUid);
      // A recipient never seen with our cookie gets none (a slot the report below leaves out).
      const [alphaStranger] = await proxied('slot-1-2-2', 'demo-webmail-proxy', STRANGER);
      expect(alphaStranger.imp[0].tagid).toBe('slot-1-2-2');
      expect(alphaStranger.user.buyeruid).toBeUndefined();
    });

    it("counts the browser's views, reopens and clicks, and the proxy's view, in the publisher report", async () => {
      await api.system.settle();
      now = FIXED_NOW;
      const res = await api.client.json(USERS.pub, {
        type: 'publisher',
        startDate: TRAFFIC_DAY,
        endDate: TRAFFIC_DAY,
        splits: ['ad_slot_id'],
        columns: ['impressions', 'unique_impressions', 'reopens', 'clicks', 'revenue'],
        filters: [{ dimension: 'ad_slot_id', operator: 'equals', values: SLOT_IDS }],
      });
      expect(res.status).toBe(200);
      const rows = res.json<Row[]>().sort((a, b) => String(a.ad_slot_id).localeCompare(String(b.ad_slot_id)));
      // Per slot: READER's first load and OTHER_READER's load are a unique view each, READER's
      // reload a reopen (no revenue); the webmail proxy's request one more unique view of PROXIED.
      // READER clicked CLICKED and the native ad.
      const expected: Record<string, { unique: number; reopens: number; clicks: number }> = {
        'slot-1-1-1': { unique: 2, reopens: 1, clicks: 0 },
        'slot-1-1-2': { unique: 2, reopens: 1, clicks: 1 },
        'slot-1-1-3': { unique: 2, reopens: 1, clicks: 1 },
        'slot-1-2-1': { unique: 3, reopens: 1, clicks: 0 },
      };
      expect(rows).toEqual(
        SLOTS.map((slot) => {
          const { unique, reopens, clicks } = expected[slot.id];
          return {
            ad_slot_id: slot.id,
            impressions: unique + reopens,
            unique_impressions: unique,
            reopens,
            clicks,
            revenue: usd(unique * REVENUE),
          };
        }),
      );
    });
  });
}

/** An image's RGBA bytes. */
function rgbaOf(image: Image): Uint8ClampedArray {
  const context = createCanvas(image.width, image.height).getContext('2d');
  context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, image.width, image.height).data;
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The mean difference per channel between a page's `box` and `expected`, an image of the box's size. */
function meanDifference(
  pixels: Uint8ClampedArray,
  width: number,
  box: Box,
  expected: Uint8ClampedArray,
): number {
  let sum = 0;
  for (let y = 0; y < box.h; y++) {
    for (let x = 0; x < box.w; x++) {
      const at = ((box.y + y) * width + box.x + x) * 4;
      const want = (y * box.w + x) * 4;
      for (let c = 0; c < 3; c++) {
        sum += Math.abs(pixels[at + c] - expected[want + c]);
      }
    }
  }
  return sum / (box.w * box.h * 3);
}

/** How many distinct colours a page's `box` holds. */
function coloursIn(pixels: Uint8ClampedArray, width: number, box: Box): number {
  const colours = new Set<number>();
  for (let y = 0; y < box.h; y++) {
    for (let x = 0; x < box.w; x++) {
      const at = ((box.y + y) * width + box.x + x) * 4;
      colours.add((pixels[at] << 16) | (pixels[at + 1] << 8) | pixels[at + 2]);
    }
  }
  return colours.size;
}
