import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPort } from '@app/runtime';
import { chromiumAvailable, fullScreenshot, launchChromium, signIn } from '../support/browser';
import { startReporting, USERS, writeTestCatalog, type RunningReporting } from './reporting-system';

interface ShownRow {
  booking: string;
  metric: string;
  /** Flight, goal, delivered, expected by now, progress and pace: as the page shows them. */
  cells: string[];
  delivered: number;
  today: number | null;
  expected: string;
  progress: number;
}

/** The Delivery table as the page shows it: each row's booking, metric, cells and progress bar. */
async function shownRows(page: Page): Promise<ShownRow[]> {
  return page.$$eval('#delivery-table tbody tr', (rows) =>
    rows.map((row: any) => ({
      booking: row.dataset.booking as string,
      metric: row.dataset.metric as string,
      cells: Array.from(row.querySelectorAll('td') as ArrayLike<any>).map(
        (td: any) => td.textContent as string,
      ),
      delivered: Number(row.querySelector('td[data-value]').dataset.value),
      today: row.querySelector('[data-today]')
        ? Number(row.querySelector('[data-today]').dataset.today)
        : null,
      expected: row.querySelectorAll('td[data-value]')[1].dataset.value as string,
      progress: Number(row.querySelector('progress').value),
    })),
  );
}

/**
 * The report builder's Delivery view in a real browser: after the demo newsletter's booked
 * campaigns are served through the ad tag, a publisher signed in sees each booking on its
 * inventory with what it delivered; another publisher sees none of them.
 */
describe.skipIf(!chromiumAvailable())(
  'report builder: the Delivery view in a real browser [embedded]',
  () => {
    let api: RunningReporting;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      api = await startReporting('embedded', {
        CATALOG_PATH: writeTestCatalog((doc) => {
          doc.dsps = [];
        }),
      });
      const auctionUrl = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
      // Three readers open the demo newsletter's top banner: the paced campaign's three impressions.
      for (const reader of ['view-reader-1', 'view-reader-2', 'view-reader-3']) {
        const res = await request(
          `${auctionUrl}/img/slot-1-1-1?placement=drop-1&list=demo-list&kv=section:news&recipient=${reader}`,
        );
        await res.body.dump();
        expect(String(res.headers.location)).toContain('/creatives/cr-bk-paced-600x200.svg');
      }
      // Five impressions of the days before, in the flight's counter only (not today's), so that
      // the view's lifetime and today differ.
      await api.system.deliveryCounters.reserve([
        { key: 'c:cmp-bk-paced:impressions:life', amount: 5, limit: 1_000_000, ttlMs: 86_400_000 },
      ]);
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      page = await context.newPage();
      await page.goto(`${api.baseUrl}/`);
      await page.waitForSelector('body[data-state="ready"]');
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await api?.system.close();
    });

    it("shows a publisher's bookings with delivery against goal and pace", async () => {
      await signIn(page, USERS.pub);
      await page.click('#show-delivery');
      await page.waitForSelector('#delivery-table:not([hidden]) tbody tr', { timeout: 20_000 });
      const rows = await shownRows(page);
      expect(new Set(rows.map((r) => r.booking))).toEqual(
        new Set([
          'campaign:cmp-bk-paced',
          'campaign:cmp-bk-capped',
          'campaign:cmp-bk-kv',
          'campaign:cmp-bk-roadblock',
          'campaign:cmp-bk-takeover',
        ]),
      );
      const paced = rows.find((r) => r.booking === 'campaign:cmp-bk-paced')!;
      // Flight, goal, delivered, today, expected by now, progress and pace.
      expect(paced.cells[0]).toBe('2026-01-01 –2027-12-31UTC');
      expect(paced.cells[1]).toBe('1,000,000 impressions2,400 a day');
      expect([paced.delivered, paced.today]).toEqual([8, 3]);
      expect(paced.cells[2]).toBe('83 today');
      // A straight line over the two-year flight: what is due by the pinned "now".
      const share =
        (Date.parse('2026-11-22T10:30:00Z') - Date.parse('2026-01-01T00:00:00Z')) / (730 * 86_400_000);
      expect(paced.expected).toBe(String(Math.round(1_000_000 * share)));
      expect(paced.cells[3]).toBe(Math.round(1_000_000 * share).toLocaleString('en-US'));
      expect(paced.progress).toBeCloseTo(8 / 1_000_000, 9);
      const capped = rows.find((r) => r.booking === 'campaign:cmp-bk-capped')!;
      expect(capped.metric).toBe('clicks');
      expect([capped.delivered, capped.today]).toEqual([0, null]);
      expect(capped.expected).toBe('');
      expect(await page.textContent('#delivery-summary')).toContain('5 booked goal sets');
      await fullScreenshot(page, 'report-builder-delivery.png');
    });

    it('shows another publisher none of them, and forgets the view on sign-out', async () => {
      await page.click('#sign-out');
      expect(await page.isHidden('#delivery')).toBe(true);
      await signIn(page, USERS.pub2);
      await page.click('#show-delivery');
      await page.waitForFunction(() =>
        String((globalThis as any).document.querySelector('#delivery-summary')?.textContent).includes(
          'No booked goal',
        ),
      );
      expect(await shownRows(page)).toEqual([]);
      await fullScreenshot(page, 'report-builder-delivery-none.png');
    });
  },
);
