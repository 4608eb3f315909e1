import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportCode } from '@app/report-model';
import { BUILDER_MODULES } from '@apps/reporting';
import { demoEvents } from '@app/testing';
import { artifactPath, chromiumAvailable, fullScreenshot, launchChromium, signIn } from '../support/browser';
import { publishEvents, startReporting, USERS, type RunningReporting } from './reporting-system';

type Row = Record<string, string | number | null>;

interface BuilderCatalog {
  now: number;
  resultCodes: { code: number; name: string; httpStatus: number; message: string; advice: string }[];
  splits: { name: string; exactness: string; variantExactness: string | null }[];
  metrics: { name: string; inVariant: boolean }[];
}

/** Closed days of the demo traffic, which ends the day before the pinned "today" (2026-11-22). */
const RANGE = { startDate: '2026-11-12', endDate: '2026-11-21' };
const COLUMNS = ['impressions', 'clicks', 'ctr', 'revenue'];
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const asCell = (v: string | number | null | undefined): string =>
  v === null || v === undefined ? '' : String(v);
const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

interface TableContent {
  fields: string[];
  rows: string[][];
  totals: string[];
}

/** The table as the page shows it: raw values from each cell's data-value. */
async function readTable(page: Page): Promise<TableContent> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    const values = (row: any): string[] =>
      Array.from(row.querySelectorAll('td') as ArrayLike<any>).map((td: any) => td.dataset.value as string);
    return {
      fields: Array.from(doc.querySelectorAll('#report-table thead th') as ArrayLike<any>).map(
        (th: any) => th.dataset.field as string,
      ),
      rows: Array.from(doc.querySelectorAll('#report-table tbody tr') as ArrayLike<any>).map(values),
      totals: Array.from(doc.querySelectorAll('#report-table tfoot tr') as ArrayLike<any>).flatMap(values),
    };
  });
}

function expectedTable(rows: Row[]): TableContent {
  const fields = Object.keys(rows[0]);
  const cells = (r: Row) => fields.map((f) => asCell(r[f]));
  return { fields, rows: rows.slice(0, -1).map(cells), totals: cells(rows[rows.length - 1]) };
}

async function runAndWait(page: Page): Promise<void> {
  await page.click('#run');
  await page.waitForSelector('#results[data-status="done"]', { timeout: 20_000 });
}

async function chooseColumns(page: Page, columns: readonly string[]): Promise<void> {
  const all = await page.$$eval('input[data-column]', (inputs) =>
    inputs.map((i) => (i as unknown as { value: string }).value),
  );
  for (const name of all) {
    await page.setChecked(`#col-${name}`, columns.includes(name));
  }
}

/** Pixels of the chart canvas that are not transparent. */
async function paintedPixels(page: Page): Promise<number> {
  return page.evaluate(() => {
    const canvas = (globalThis as any).document.getElementById('chart');
    const data: Uint8ClampedArray = canvas
      .getContext('2d')
      .getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < data.length; i += 4) {
      if (data[i] !== 0) {
        painted++;
      }
    }
    return painted;
  });
}

async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

describe.skipIf(!chromiumAvailable())('report builder page in a real browser [embedded]', () => {
  let api: RunningReporting;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let catalog: BuilderCatalog;
  /** The publisher's report as the API answers it, totals at the bottom. */
  let expected: Row[];
  /** The same, filtered on two countries and sorted by clicks. */
  let expectedFiltered: Row[];
  const apiRequests: { accept: string | undefined; body: any }[] = [];
  const requestedUrls: string[] = [];
  const consoleErrors: string[] = [];

  const codeEntry = (code: number) => catalog.resultCodes.find((c) => c.code === code)!;

  function watch(p: Page): void {
    p.on('console', (message) => {
      // A refused request (401 of the wrong token) is logged by Chromium itself: not a page error.
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
        consoleErrors.push(message.text());
      }
    });
    p.on('pageerror', (error) => consoleErrors.push(error.message));
  }

  beforeAll(async () => {
    api = await startReporting('embedded');
    await publishEvents(api.system, demoEvents(10, 1000));
    // The reference first: the page's seeds start above this client's, and a user's seeds must grow.
    const res = await api.client.json(USERS.pub, {
      ...RANGE,
      type: 'publisher',
      splits: ['day'],
      columns: COLUMNS,
      format: { columnTotals: 'bottom' },
    });
    expect(res.status).toBe(200);
    expected = res.json<Row[]>();
    expect(expected.length).toBeGreaterThan(5);
    const filtered = await api.client.json(USERS.pub, {
      ...RANGE,
      type: 'publisher',
      splits: ['day'],
      columns: COLUMNS,
      filters: [{ dimension: 'country', operator: 'equals', values: ['US', 'GB'] }],
      sort: { clicks: 'desc' },
      format: { columnTotals: 'bottom' },
    });
    expectedFiltered = filtered.json<Row[]>();
    expect(expectedFiltered.length).toBeGreaterThan(5);
    catalog = (await (await fetch(`${api.baseUrl}/builder/catalog.json`)).json()) as BuilderCatalog;

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    watch(page);
    page.on('request', (request: Request) => {
      requestedUrls.push(request.url());
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/api') {
        apiRequests.push({ accept: request.headers().accept, body: request.postDataJSON() });
      }
    });
    const opened = await page.goto(`${api.baseUrl}/`);
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('body[data-state="ready"]');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.system.close();
  });

  it('loads every file from the app itself (no CDN) and takes "now" from the service', async () => {
    const origins = new Set(requestedUrls.map((u) => new URL(u).origin));
    expect([...origins]).toEqual([api.baseUrl]);
    // The page's ES modules, each fetched by the browser as builder.js imports it (no bundle).
    const modules = BUILDER_MODULES.map((file) => `/assets/${file}`);
    expect(requestedUrls.map((u) => new URL(u).pathname)).toEqual(
      expect.arrayContaining(['/', '/assets/builder.css', '/assets/chart.umd.js', ...modules]),
    );
    expect(await page.evaluate(() => typeof (globalThis as any).Chart)).toBe('function');
    // The service's clock is pinned at FIXED_NOW, days behind the browser's.
    expect(Math.abs(catalog.now * 1000 - Date.now())).toBeGreaterThan(24 * 3600 * 1000);
  });

  it('labels every form control and has advice for every result code', async () => {
    const unlabelled = await page.$$eval('input:not([type="hidden"]), select, textarea', (controls) =>
      controls
        .filter(
          (c: any) =>
            c.labels.length === 0 && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby'),
        )
        .map((c: any) => c.id as string),
    );
    expect(unlabelled).toEqual([]);
    const codes = Object.values(ReportCode).filter((v) => typeof v === 'number');
    expect(catalog.resultCodes.map((c) => c.code).sort()).toEqual([...codes].sort());
    for (const c of catalog.resultCodes) {
      expect(c.advice.length, `advice for ${c.code}`).toBeGreaterThan(10);
    }
  });

  it('hashes with SHA-1 exactly as the service does, in WebCrypto and in its plain fallback', async () => {
    for (const text of ['demo-pub-token1764000000', '', 'ü€ token with spaces 42', 'x'.repeat(200)]) {
      const [subtle, fallback] = await page.evaluate(async (t) => {
        const signing = (globalThis as any).reportBuilderSigning;
        return [await signing.sha1Hex(t), signing.sha1HexFallback(t)];
      }, text);
      expect([subtle, fallback]).toEqual([sha1(text), sha1(text)]);
    }
  });

  it('explains a wrong token in a sentence, with what to do', async () => {
    await page.fill('#user-id', USERS.pub.id);
    await page.fill('#token', 'not-the-token');
    await page.click('#sign-in');
    const message = page.locator('#sign-in-message');
    await message.waitFor({ state: 'visible' });
    const code = Number(await message.getAttribute('data-code'));
    // 10 today; 31 once wrong hashes answer "Invalid hash".
    expect([10, 31]).toContain(code);
    const text = await message.innerText();
    expect(text).toContain(codeEntry(code).message);
    expect(text).toContain(codeEntry(code).advice);
    expect(text).toContain(`Code ${code}`);
    expect(await page.evaluate(() => (globalThis as any).document.body.dataset.state)).toBe('ready');
    await page.screenshot({ path: artifactPath('report-builder-sign-in-error.png') });
  });

  it('signs in, offering only the report types the account may use', async () => {
    await page.fill('#token', USERS.pub.token);
    await page.press('#token', 'Enter');
    await page.waitForSelector('body[data-state="signed-in"]', { timeout: 20_000 });
    expect(await page.inputValue('#token')).toBe('');
    expect(await page.isEnabled('#type-publisher')).toBe(true);
    expect(await page.isDisabled('#type-advertiser')).toBe(true);
    expect(await page.innerText('#type-advertiser-note')).toContain('code 42');
    expect(await page.innerText('#session-user')).toBe(USERS.pub.id);
  });

  it('runs a report split by day whose table equals the rows of the API, totals included', async () => {
    await page.check('#type-publisher');
    await page.fill('#start-date', RANGE.startDate);
    await page.fill('#end-date', RANGE.endDate);
    await page.selectOption('#split', 'day');
    await chooseColumns(page, COLUMNS);
    await page.selectOption('#totals', 'bottom');
    await runAndWait(page);
    expect(await readTable(page)).toEqual(expectedTable(expected));
    expect(await page.innerText('#report-table tfoot')).toContain('Totals');
    expect(await page.locator('#notices [data-notice]').count()).toBe(0);
    const last = apiRequests[apiRequests.length - 1];
    expect(last.accept).toBe('application/json');
    expect(last.body).toMatchObject({
      id: USERS.pub.id,
      type: 'publisher',
      ...RANGE,
      splits: ['day'],
      columns: COLUMNS,
      format: { columnTotals: 'bottom' },
    });
  });

  it('draws a line chart over the days', async () => {
    await page.waitForSelector('#chart-figure:not([hidden])');
    expect(await page.evaluate(() => (globalThis as any).Chart.getChart('chart')?.config.type)).toBe('line');
    expect(await paintedPixels(page)).toBeGreaterThan(1000);
    await fullScreenshot(page, 'report-builder.png');
  });

  it('sorts the table by a column when its heading is clicked', async () => {
    const clicks = (t: TableContent) => t.rows.map((r) => Number(r[t.fields.indexOf('clicks')]));
    await page.click('th[data-field="clicks"] button');
    expect(await page.getAttribute('th[data-field="clicks"]', 'aria-sort')).toBe('descending');
    const desc = clicks(await readTable(page));
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    await page.click('th[data-field="clicks"] button');
    expect(await page.getAttribute('th[data-field="clicks"]', 'aria-sort')).toBe('ascending');
    const asc = clicks(await readTable(page));
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    expect((await readTable(page)).totals).toEqual(expectedTable(expected).totals);
  });

  it('downloads the XLSX through /api, a fresh signed request holding the same rows', async () => {
    const before = apiRequests.length;
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-xlsx')]);
    expect(download.suggestedFilename()).toBe('report-publisher-day-2026-11-12-to-2026-11-21.xlsx');
    expect(apiRequests.length).toBe(before + 1);
    expect(apiRequests[before].accept).toBe(XLSX);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load((await readFile(await download.path())) as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0];
    const fields = Object.keys(expected[0]);
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows).toEqual([fields, ...expected.map((r) => fields.map((f) => r[f]))]);
  });

  it('downloads JSON, XML and HTML the same way', async () => {
    const fetchDownload = async (format: string) => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click(`#download-${format}`),
      ]);
      return { name: download.suggestedFilename(), text: await readFile(await download.path(), 'utf8') };
    };
    const json = await fetchDownload('json');
    expect(json.name).toMatch(/\.json$/);
    expect(JSON.parse(json.text)).toEqual(expected);
    const xml = await fetchDownload('xml');
    expect(xml.text).toMatch(/^<\?xml[^>]*>\s*<root>/);
    expect(xml.text).toContain(`<day>${expected[0].day}</day>`);
    const html = await fetchDownload('html');
    expect(html.text).toContain('<table>');
    expect(apiRequests.slice(-3).map((r) => r.accept)).toEqual([
      'application/json',
      'application/xml',
      'text/html',
    ]);
  });

  it('keeps the query in the URL, never the token, and restores the form from it', async () => {
    const url = new URL(page.url());
    const params = new URLSearchParams(url.hash.slice(1));
    expect(Object.fromEntries(params)).toMatchObject({
      type: 'publisher',
      start: RANGE.startDate,
      end: RANGE.endDate,
      split: 'day',
      columns: COLUMNS.join(','),
    });
    expect(url.search).toBe('');
    const token = USERS.pub.token;
    expect(page.url()).not.toContain(token);
    const stored = await page.evaluate(() => {
      const all: string[] = [];
      for (const storage of [(globalThis as any).localStorage, (globalThis as any).sessionStorage]) {
        for (let i = 0; i < storage.length; i++) {
          all.push(storage.key(i), storage.getItem(storage.key(i)));
        }
      }
      return all.join('\n');
    });
    expect(stored).not.toContain(token);
    expect(await page.content()).not.toContain(token);
    for (const r of apiRequests) {
      expect(JSON.stringify(r.body)).not.toContain(token);
    }

    await page.reload();
    await page.waitForSelector('body[data-state="ready"]');
    expect(await page.inputValue('#start-date')).toBe(RANGE.startDate);
    expect(await page.inputValue('#end-date')).toBe(RANGE.endDate);
    expect(await page.inputValue('#split')).toBe('day');
    expect(await page.isChecked('#type-publisher')).toBe(true);
    for (const c of COLUMNS) {
      expect(await page.isChecked(`#col-${c}`)).toBe(true);
    }
    expect(await page.locator('#col-spend').count()).toBe(0); // an advertiser metric
    expect(await page.inputValue('#user-id')).toBe(USERS.pub.id);
    expect(await page.inputValue('#token')).toBe('');
    // Signing in again runs the shared report.
    await page.fill('#token', USERS.pub.token);
    await page.click('#sign-in');
    await page.waitForSelector('#results[data-status="done"]', { timeout: 20_000 });
    expect(await readTable(page)).toEqual(expectedTable(expected));
  });

  it('signs every request with a fresh, growing seed taken from the service clock', () => {
    const seeds = apiRequests.map((r) => r.body.seed as number);
    expect(seeds.length).toBeGreaterThan(8);
    for (let i = 1; i < seeds.length; i++) {
      expect(seeds[i]).toBeGreaterThan(seeds[i - 1]);
    }
    expect(Math.abs(seeds[0] - catalog.now)).toBeLessThan(300);
    // The first request carried the wrong token of the sign-in test; every other one the right token.
    const [wrong, ...right] = apiRequests;
    expect(wrong.body.hash).toBe(sha1(`not-the-token${wrong.body.seed}`));
    for (const r of right) {
      expect(r.body.hash).toBe(sha1(`${USERS.pub.token}${r.body.seed}`));
    }
  });

  it('filters and sorts through the API, and keeps both in the URL', async () => {
    await page.click('#add-filter');
    expect(await page.inputValue('#filter-list .filter-dimension')).toBe('country');
    await page.selectOption('#filter-list .filter-operator', 'equals');
    await page.fill('#filter-list .filter-values', 'US, GB');
    await page.selectOption('#sort-key', 'clicks');
    await page.selectOption('#sort-dir', 'desc');
    await runAndWait(page);
    expect(await readTable(page)).toEqual(expectedTable(expectedFiltered));
    expect(apiRequests[apiRequests.length - 1].body).toMatchObject({
      filters: [{ dimension: 'country', operator: 'equals', values: ['US', 'GB'] }],
      sort: { clicks: 'desc' },
    });
    const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
    expect(JSON.parse(params.get('filters')!)).toEqual([['country', 'equals', ['US', 'GB']]]);
    expect(params.get('sort')).toBe('clicks:desc');
    await page.click('#filter-list .filter-remove');
    await page.selectOption('#sort-key', '');
    expect(new URL(page.url()).hash).not.toContain('filters');
  });

  it('marks an inexact split, from the catalogue and X-Report-Exactness', async () => {
    const country = catalog.splits.find((s) => s.name === 'country')!;
    expect(country.exactness).toBe('inexact');
    await page.selectOption('#split', 'country');
    await runAndWait(page);
    expect(await page.innerText('#notices [data-notice="inexact"]')).toContain(
      'The country split is inexact',
    );
    expect(await page.innerText('th[data-field="country"]')).toContain('inexact');
    expect(await page.evaluate(() => (globalThis as any).Chart.getChart('chart')?.config.type)).toBe('bar');
    await fullScreenshot(page, 'report-builder-inexact.png');
  });

  it('shows the columns the service left out, from X-Report-Removed', async () => {
    await page.route('**/api', async (route) => {
      const response = await route.fetch();
      await route.fulfill({
        response,
        headers: { ...response.headers(), 'x-report-removed': 'spend', 'x-report-code': '300' },
      });
    });
    try {
      await runAndWait(page);
      const notice = await page.innerText('#notices [data-notice="removed"]');
      expect(notice).toContain('Columns left out: spend');
      expect(notice).toContain('not offered for publisher reports');
      expect(notice).toContain(codeEntry(300).advice);
    } finally {
      await page.unroute('**/api');
    }
  });

  it('explains code 51 with the wait of Retry-After', async () => {
    await page.route('**/api', (route) =>
      route.fulfill({
        status: 429,
        headers: { 'X-Report-Code': '51', 'Retry-After': '3', 'Content-Type': 'application/json' },
        body: JSON.stringify({ error: { code: 51, message: 'Query limit exceeded: at most 1 a second' } }),
      }),
    );
    try {
      await page.click('#run');
      const message = page.locator('#result-message[data-code="51"]');
      await message.waitFor({ state: 'visible' });
      const text = await message.innerText();
      expect(text).toContain(codeEntry(51).message);
      expect(text).toContain('Wait 3 seconds');
      expect(await page.isDisabled('#run')).toBe(true);
      expect(await page.innerText('#run')).toMatch(/wait [1-3] s/);
      await page.screenshot({ path: artifactPath('report-builder-rate-limited.png') });
    } finally {
      await page.unroute('**/api');
    }
    await page.waitForSelector('#run:not([disabled])', { timeout: 10_000 });
  });

  it('logs no error in the console (no CSP violation, no script error)', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('can be used with the keyboard alone: Tab to the fields, Enter to sign in and to run', async () => {
    const keyboard = await context.browser()!.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await keyboard.newPage();
      watch(p);
      await p.goto(`${api.baseUrl}/`);
      await p.waitForSelector('body[data-state="ready"]');
      const focused = () =>
        p.evaluate(() => {
          const active = (globalThis as any).document.activeElement;
          const style = (globalThis as any).getComputedStyle(active);
          return { id: active.id as string, outline: `${style.outlineStyle} ${style.outlineWidth}` };
        });
      const tabTo = async (id: string) => {
        for (let i = 0; i < 80; i++) {
          await p.keyboard.press('Tab');
          const f = await focused();
          if (f.id) {
            expect(f.outline, `focus of #${f.id} is visible`).not.toMatch(/^none|0px$/);
          }
          if (f.id === id) {
            return;
          }
        }
        throw new Error(`Tab never reached #${id}`);
      };
      await tabTo('user-id');
      await p.keyboard.type(USERS.pub2.id);
      await p.keyboard.press('Tab');
      expect((await focused()).id).toBe('token');
      await p.keyboard.type(USERS.pub2.token);
      await p.keyboard.press('Enter');
      await p.waitForSelector('body[data-state="signed-in"]', { timeout: 20_000 });
      await tabTo('run');
      await p.screenshot({ path: artifactPath('report-builder-keyboard.png') });
      await p.keyboard.press('Enter');
      await p.waitForSelector('#results[data-status="done"]', { timeout: 20_000 });
      expect(await p.locator('#report-table tbody tr').count()).toBeGreaterThan(0);
      // Enter in a text field submits the report form too.
      await p.focus('#end-date');
      await p.keyboard.press('Enter');
      await p.waitForSelector('#results[data-status="running"], #results[data-status="done"]');
      await p.waitForSelector('#results[data-status="done"]', { timeout: 20_000 });
    } finally {
      await keyboard.close();
    }
  });

  it('is readable at 200% zoom: nothing overflows horizontally', async () => {
    // 1280 CSS pixels at 200% zoom leave 640 for the page.
    const zoomed = await context.browser()!.newContext({
      viewport: { width: 640, height: 900 },
      deviceScaleFactor: 2,
    });
    try {
      const p = await zoomed.newPage();
      watch(p);
      await p.goto(`${api.baseUrl}/`);
      await p.waitForSelector('body[data-state="ready"]');
      expect(await horizontalOverflow(p)).toBeLessThanOrEqual(0);
      await signIn(p, USERS.adv);
      expect(await p.isDisabled('#type-publisher')).toBe(true);
      expect(await p.isChecked('#type-advertiser')).toBe(true);
      await p.selectOption('#split', 'campaign_id');
      await p.click('#attribute-details summary');
      await p.check('#col-campaign_name');
      await runAndWait(p);
      expect(await p.locator('#report-table tbody tr').count()).toBeGreaterThan(0);
      expect(await horizontalOverflow(p)).toBeLessThanOrEqual(0);
      await fullScreenshot(p, 'report-builder-zoom-200.png');
      await p.locator('#results').screenshot({ path: artifactPath('report-builder-zoom-200-results.png') });
    } finally {
      await zoomed.close();
    }
    expect(consoleErrors).toEqual([]);
  });

  it('offers the advertiser-only variant its own splits and metrics', async () => {
    const lite = await context.browser()!.newContext();
    try {
      const p = await lite.newPage();
      watch(p);
      await p.goto(`${api.baseUrl}/`);
      await p.waitForSelector('body[data-state="ready"]');
      await signIn(p, USERS.lite);
      expect(await p.isDisabled('#type-publisher')).toBe(true);
      expect(await p.innerText('#type-publisher-note')).toContain('code 44');
      expect(await p.isChecked('#type-advertiser')).toBe(true);
      const splits = await p.$$eval('#split option', (options) =>
        options.map((o: any) => o.value as string).filter(Boolean),
      );
      expect(splits.sort()).toEqual(
        catalog.splits
          .filter((s) => s.variantExactness !== null)
          .map((s) => s.name)
          .sort(),
      );
      const inexact = await p.$$eval('#split optgroup:last-of-type option', (options) =>
        options.map((o: any) => o.value as string),
      );
      expect(inexact).toEqual(
        catalog.splits.filter((s) => s.variantExactness === 'inexact').map((s) => s.name),
      );
      expect(inexact).toContain('publisher_domain');
      const metrics = await p.$$eval('#metric-list input', (inputs) =>
        inputs.map((i: any) => i.value as string),
      );
      expect(metrics).toEqual(catalog.metrics.filter((m) => m.inVariant).map((m) => m.name));
    } finally {
      await lite.close();
    }
  });

  it('renders the API documentation at /docs from files of the app', async () => {
    const docs = await context.newPage();
    watch(docs);
    const urls: string[] = [];
    docs.on('request', (r) => urls.push(r.url()));
    await docs.goto(`${api.baseUrl}/docs`);
    await docs.waitForSelector('.opblock-post', { timeout: 20_000 });
    expect(await docs.innerText('.opblock-post .opblock-summary-path')).toContain('/api');
    expect([...new Set(urls.map((u) => new URL(u).origin))]).toEqual([api.baseUrl]);
    await docs.screenshot({ path: artifactPath('api-docs.png') });
    expect(consoleErrors).toEqual([]);
    await docs.close();
  });
});
