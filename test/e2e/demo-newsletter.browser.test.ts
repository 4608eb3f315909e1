import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
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
/** The three slots of pub-1 (The Morning Ledger, demo-pub) that the demo newsletter embeds, in page order. */
const SLOTS = [
  { id: 'slot-1-1-1', section: 'The Morning Ledger Daily edition', w: 600, h: 200 },
  { id: 'slot-1-1-2', section: 'The Morning Ledger Daily edition', w: 300, h: 250 },
  { id: 'slot-1-2-1', section: 'The Morning Ledger Weekend special', w: 728, h: 90 },
] as const;
const CLICKED = SLOTS[1];
const READER = 'browser-reader-0001';
/** Both DSPs outbid every direct campaign (2.40 at most); alpha wins every slot, at beta's price plus a cent. */
const ALPHA_CPM = 9;
const BETA_CPM = 8;
const CLEARING_MICROS = 8_010_000;
const SPEND = CLEARING_MICROS / 1000;
const REVENUE = Math.round(SPEND * 0.7); // pub-1's exchange share is 0.3
/**
 * The auction's budget for the DSPs (catalog 120 ms, tmax 150 ms) raised to its maximum: the
 * simulators share this process's event loop with the auction and the browser driver, and on a
 * busy machine an answer sent at once can arrive late, leaving the slot to direct demand.
 */
const DSP_BUDGET_MS = 1000;

type Row = Record<string, string | number | null>;

/** What the page reports of one ad image; the DOM types are not in this project's `lib`. */
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
    const responses: SeenResponse[] = [];

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
        for (const dsp of doc.dsps) dsp.timeoutMs = DSP_BUDGET_MS;
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
        });
      });
      page = await context.newPage();
      const opened = await page.goto(`${auctionUrl}/demo/newsletter?recipient=${READER}`, {
        waitUntil: 'load',
      });
      expect(opened?.status()).toBe(200);
    }, 30_000);

    afterAll(async () => {
      await browser?.close();
      await api?.system.close();
      await alpha?.close();
      await beta?.close();
    });

    it('shows the newsletter with one section per demo slot, each with its ad tag', async () => {
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
    });

    it("loads every ad image, at its slot's size, from the winning DSP's creative", async () => {
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
      for (const slot of SLOTS) {
        const tag = responses.filter((r) => r.url.startsWith(`${auctionUrl}/img/${slot.id}?`));
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
    });

    it('saves a full-page screenshot for people to look at', async () => {
      const file = artifactPath('demo-newsletter.png');
      const png = await page.screenshot({ path: file, fullPage: true });
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
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

    it('ran one auction per slot, won by alpha, with a win notice and an impression tracker each', async () => {
      await api.system.settle();
      for (const dsp of [alpha, beta]) {
        expect(dsp.requests.map((r) => (r.body as any).imp[0].tagid).sort()).toEqual(SLOTS.map((s) => s.id));
      }
      expect(alpha.wins.map((w) => w.query.price)).toEqual(['8.01', '8.01', '8.01']);
      expect(alpha.trackerHits.filter((h) => h.kind === 'imp')).toHaveLength(SLOTS.length);
    });

    it("counts the browser's views and its click in the publisher report", async () => {
      await api.system.settle();
      now = FIXED_NOW;
      const res = await api.client.json(USERS.pub, {
        type: 'publisher',
        startDate: TRAFFIC_DAY,
        endDate: TRAFFIC_DAY,
        splits: ['ad_slot_id'],
        columns: ['impressions', 'unique_impressions', 'reopens', 'clicks', 'revenue'],
        filters: [{ dimension: 'ad_slot_id', operator: 'equals', values: SLOTS.map((s) => s.id) }],
      });
      expect(res.status).toBe(200);
      const rows = res.json<Row[]>().sort((a, b) => String(a.ad_slot_id).localeCompare(String(b.ad_slot_id)));
      expect(rows).toEqual(
        SLOTS.map((slot) => ({
          ad_slot_id: slot.id,
          impressions: 1,
          unique_impressions: 1,
          reopens: 0,
          clicks: slot === CLICKED ? 1 : 0,
          revenue: Math.round(REVENUE / 100) / 1e4,
        })),
      );
    });
  });
}
