import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Readable, Writable, pipeline } from 'node:stream';
import { Logger } from '@nestjs/common';
import escapeHtml from 'escape-html';
import ExcelJS from 'exceljs';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { create } from 'xmlbuilder2';
import type { CellValue, Report, ReportRecord } from '../report/report-builder';
import type { ResponseFormat } from '../request/media-type';
import { ReportRendererService, layoutFor, type Layout } from './report-renderer.service';

const renderer = new ReportRendererService();

const FIELDS = ['publisher_id', 'publisher_name', 'impressions', 'ctr'];
const RECORDS: ReportRecord[] = [
  { publisher_id: 'pub-1', publisher_name: 'Morning <Ledger> "&" \'', impressions: 1200, ctr: 1.25 },
  { publisher_id: 'pub-2', publisher_name: null, impressions: 0, ctr: 0 },
  { publisher_id: 'ünï€ødé 🙂', publisher_name: 'tab\there\nnew line', impressions: 7, ctr: 14.2857 },
];
const TOTALS: ReportRecord = {
  publisher_id: '(totals)',
  publisher_name: null,
  impressions: 1207,
  ctr: 1.4913,
};
const NUMERIC = new Set(['impressions', 'ctr']);

function reportOf(records: readonly ReportRecord[], fields = FIELDS): Report {
  return { fields, records, totals: TOTALS, numericFields: NUMERIC };
}

/** A report whose records arrive one by one, as from the store, and count how many were taken. */
function streamedReport(count: number, options: { failAfter?: number } = {}) {
  const state = { pulled: 0, returned: false };
  async function* records(): AsyncGenerator<ReportRecord> {
    try {
      for (let i = 0; i < count; i += 1) {
        if (options.failAfter !== undefined && i === options.failAfter) {
          throw new Error('store gone mid-way');
        }
        state.pulled += 1;
        await Promise.resolve();
        yield {
          publisher_id: `pub-${i}`,
          publisher_name: `Publisher number ${i}`,
          impressions: i,
          ctr: i / 7,
        };
      }
    } finally {
      state.returned = true;
    }
  }
  const report: Report = { fields: FIELDS, records: records(), totals: TOTALS, numericFields: NUMERIC };
  return { report, state };
}

async function bodyOf(readable: string | Readable): Promise<Buffer> {
  if (typeof readable === 'string') {
    return Buffer.from(readable);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of readable) {
    chunks.push(Buffer.from(chunk as string | Buffer));
  }
  return Buffer.concat(chunks);
}

async function rendered(report: Report, format: ResponseFormat, layout: Layout): Promise<string> {
  return (await bodyOf(renderer.render(report, format, layout).body)).toString('utf8');
}

// ---- The renderer as it was before streaming, to hold the text formats to the same bytes. ----

function oldSequence(report: Report, layout: Layout): ReportRecord[] {
  const out: ReportRecord[] = [];
  if (layout.columnNames === 'top') {
    out.push(Object.fromEntries(report.fields.map((f) => [f, f])));
  }
  if (layout.columnTotals === 'top') {
    out.push(report.totals);
  }
  out.push(...(report.records as ReportRecord[]));
  if (layout.columnTotals === 'bottom') {
    out.push(report.totals);
  }
  return out;
}

const text = (value: CellValue): string => (value === null ? '' : String(value));

function oldXml(report: Report, layout: Layout): string {
  const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('root');
  for (const record of oldSequence(report, layout)) {
    for (const field of report.fields) {
      root.ele(field).txt(text(record[field] ?? null));
    }
  }
  return root.end();
}

function oldHtml(report: Report, layout: Layout): string {
  const cells = (record: ReportRecord, tag: 'td' | 'th') =>
    report.fields
      .map((f) => {
        const numeric = tag === 'td' && typeof record[f] === 'number' ? ' class="n"' : '';
        return `<${tag}${numeric}>${escapeHtml(text(record[f] ?? null))}</${tag}>`;
      })
      .join('');
  const head: string[] = [];
  if (layout.columnNames === 'top') {
    head.push(`<tr>${cells(Object.fromEntries(report.fields.map((f) => [f, f])), 'th')}</tr>`);
  }
  const body = (report.records as ReportRecord[]).map((r) => `<tr>${cells(r, 'td')}</tr>`);
  if (layout.columnTotals === 'top') {
    body.unshift(`<tr class="totals">${cells(report.totals, 'td')}</tr>`);
  }
  const foot =
    layout.columnTotals === 'bottom' ? `<tfoot><tr>${cells(report.totals, 'td')}</tr></tfoot>` : '';
  const table = `<table>${head.length ? `<thead>${head.join('')}</thead>` : ''}<tbody>${body.join('\n')}</tbody>${foot}</table>`;
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Report</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25rem .6rem}td.n{text-align:right}thead th{background:#f3f3f3}tfoot td,tr.totals td{font-weight:bold}</style>
</head><body>${table}</body></html>\n`;
}

const LAYOUTS: Layout[] = (['top', 'off'] as const).flatMap((columnNames) =>
  (['top', 'bottom', 'off'] as const).map((columnTotals) => ({ columnNames, columnTotals })),
);

describe('ReportRendererService: the same text as before, now streamed', () => {
  for (const layout of LAYOUTS) {
    for (const [name, records] of [
      ['records', RECORDS],
      ['no record', []],
    ] as const) {
      const label = `${name}, names ${layout.columnNames}, totals ${layout.columnTotals}`;
      it(`JSON: ${label}`, async () => {
        expect(await rendered(reportOf(records), 'json', layout)).toBe(
          JSON.stringify(oldSequence(reportOf(records), layout)),
        );
      });
      it(`XML: ${label}`, async () => {
        expect(await rendered(reportOf(records), 'xml', layout)).toBe(oldXml(reportOf(records), layout));
      });
      it(`HTML: ${label}`, async () => {
        expect(await rendered(reportOf(records), 'html', layout)).toBe(oldHtml(reportOf(records), layout));
      });
    }
  }

  it('reads the totals at the bottom only after the records (a streamed report sums them in passing)', async () => {
    let read = 0;
    async function* records(): AsyncGenerator<ReportRecord> {
      for (const record of RECORDS) {
        read += 1;
        yield record;
      }
    }
    const report = {
      fields: FIELDS,
      records: records(),
      numericFields: NUMERIC,
      get totals(): ReportRecord {
        return { ...TOTALS, impressions: read };
      },
    };
    const json = JSON.parse(
      await rendered(report, 'json', { columnNames: 'off', columnTotals: 'bottom' }),
    ) as {
      impressions: number;
    }[];
    expect(json[json.length - 1].impressions).toBe(RECORDS.length);
  });

  it('XML: escapes every &, also one that looks like an entity reference', async () => {
    const report = reportOf([
      { publisher_id: 'AT&amp;T &lt; Q&A; &#65; <b>', publisher_name: null, impressions: 1, ctr: 0 },
    ]);
    const xml = await rendered(report, 'xml', { columnNames: 'off', columnTotals: 'off' });
    expect(xml).toContain('<publisher_id>AT&amp;amp;T &amp;lt; Q&amp;A; &amp;#65; &lt;b&gt;</publisher_id>');
  });
});

describe('ReportRendererService: XLSX', () => {
  async function workbookOf(report: Report, layout: Layout): Promise<ExcelJS.Worksheet> {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(
      (await bodyOf(renderer.render(report, 'xlsx', layout).body)) as unknown as ArrayBuffer,
    );
    return workbook.getWorksheet('Report')!;
  }

  it('writes typed cells, a bold frozen header row and a bold totals row', async () => {
    const sheet = await workbookOf(reportOf(RECORDS), layoutFor('xlsx', undefined, undefined));
    expect(sheet.getRow(1).values).toEqual([undefined, ...FIELDS]);
    expect(sheet.getRow(1).font?.bold).toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.rowCount).toBe(1 + RECORDS.length + 1);
    expect(sheet.getRow(2).values).toEqual([undefined, 'pub-1', RECORDS[0].publisher_name, 1200, 1.25]);
    expect(sheet.getRow(3).getCell(2).value).toBeNull();
    expect(sheet.getRow(4).getCell(2).value).toBe('tab\there\nnew line');
    expect(sheet.getRow(2).font?.bold).toBeFalsy();
    expect(sheet.getRow(5).values).toEqual([undefined, '(totals)', undefined, 1207, 1.4913]);
    expect(sheet.getRow(5).font?.bold).toBe(true);
  });

  it('puts totals on top when asked, and writes an empty report', async () => {
    const top = await workbookOf(reportOf(RECORDS), { columnNames: 'off', columnTotals: 'top' });
    expect(top.getRow(1).getCell(1).value).toBe('(totals)');
    expect(top.getRow(1).font?.bold).toBe(true);
    expect(top.rowCount).toBe(1 + RECORDS.length);
    const empty = await workbookOf(reportOf([]), layoutFor('xlsx', undefined, undefined));
    expect(empty.rowCount).toBe(2);
  });

  it('keeps control characters and characters XML cannot hold, as spreadsheet escapes', async () => {
    const hostile = [
      'nul\0 bell\u0007 vt\u000b ff\u000c esc\u001b us\u001f del\u007f',
      'cr\r\nlf\ttab',
      'not characters \uFFFE\uFFFF, a pair 🙂',
      'a literal _x0041_ stays',
      '  blanks kept  ',
    ];
    const sheet = await workbookOf(
      reportOf(hostile.map((name, i) => ({ ...RECORDS[0], publisher_id: `pub-${i}`, publisher_name: name }))),
      { columnNames: 'off', columnTotals: 'off' },
    );
    // exceljs reads inline strings without decoding ST_Xstring escapes (`_xHHHH_`); Excel does.
    const decoded = (value: unknown) =>
      String(value).replace(/_x([0-9A-F]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    expect(hostile.map((_, i) => decoded(sheet.getRow(i + 1).getCell(2).value))).toEqual(hostile);
    // A lone surrogate has no UTF-8 form: it becomes U+FFFD.
    const lone = await workbookOf(reportOf([{ ...RECORDS[0], publisher_name: 'x\uD800y' }]), {
      columnNames: 'off',
      columnTotals: 'off',
    });
    expect(lone.getRow(1).getCell(2).value).toBe('x\uFFFDy');
  });

  it('reads back a sheet of 10,000 rows exactly', async () => {
    const { report } = streamedReport(10_000);
    const sheet = await workbookOf(report, { columnNames: 'off', columnTotals: 'off' });
    expect(sheet.rowCount).toBe(10_000);
    const read: unknown[][] = [];
    sheet.eachRow((row) => read.push((row.values as unknown[]).slice(1)));
    expect(read).toEqual(
      Array.from({ length: 10_000 }, (_, i) => [`pub-${i}`, `Publisher number ${i}`, i, i / 7]),
    );
  });

  it('streams a large report row by row', async () => {
    const { report, state } = streamedReport(20_000);
    const sheet = await workbookOf(report, layoutFor('xlsx', undefined, undefined));
    expect(state.pulled).toBe(20_000);
    expect(sheet.rowCount).toBe(20_002);
    expect(sheet.getRow(20_001).values).toEqual([
      undefined,
      'pub-19999',
      'Publisher number 19999',
      19_999,
      19_999 / 7,
    ]);
  });
});

describe('ReportRendererService: streaming', () => {
  const FORMATS: ResponseFormat[] = ['json', 'xml', 'html', 'xlsx'];
  afterEach(() => {
    vi.restoreAllMocks();
  });

  for (const format of FORMATS) {
    it(`${format}: sends its first bytes before the store has given every row`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      async function* records(): AsyncGenerator<ReportRecord> {
        yield RECORDS[0];
        await gate;
        yield RECORDS[1];
      }
      const body = renderer.render(
        { fields: FIELDS, records: records(), totals: TOTALS, numericFields: NUMERIC },
        format,
        layoutFor(format, undefined, undefined),
      ).body as Readable;
      const [first] = (await once(body, 'data')) as [Buffer | string];
      expect(first.length).toBeGreaterThan(0);
      if (format !== 'xlsx') {
        expect(String(first)).toContain('pub-1');
      }
      release();
      body.resume();
      await once(body, 'end');
    });

    it(`${format}: reads no further than the client takes`, async () => {
      const { report, state } = streamedReport(1_000_000);
      const body = renderer.render(report, format, layoutFor(format, undefined, undefined)).body as Readable;
      // Nobody reads: the records pulled stop at what the buffers hold.
      body.pause();
      body.once('data', () => body.pause());
      body.resume();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stalled = state.pulled;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(state.pulled).toBe(stalled);
      expect(state.pulled).toBeLessThan(format === 'xlsx' ? 50_000 : 5_000);
      // Then a slow reader gets the rest, and leaving early cancels the records.
      body.destroy();
      await once(body, 'close');
      await vi.waitFor(() => expect(state.returned).toBe(true));
      expect(state.pulled).toBeLessThan(1_000_000);
    });

    it(`${format}: a failure mid-stream is logged and destroys the stream`, async () => {
      const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      const { report } = streamedReport(10_000, { failAfter: 5_000 });
      const body = renderer.render(report, format, layoutFor(format, undefined, undefined)).body as Readable;
      const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
      const error = await new Promise<Error | null | undefined>((resolve) => pipeline(body, sink, resolve));
      expect(error?.message).toBe('store gone mid-way');
      expect(logged).toHaveBeenCalledWith(expect.stringContaining('store gone mid-way'));
      expect(logged.mock.calls[0][0]).toContain(`the ${format} report failed after its response began`);
    });
  }
});

describe('ReportRendererService over HTTP, piped as the controller pipes it', () => {
  let server: Server;
  let next: () => { report: Report; format: ResponseFormat };

  beforeAll(async () => {
    server = createServer((_req, res) => {
      const { report, format } = next();
      const rendered = renderer.render(report, format, layoutFor(format, undefined, undefined));
      res.writeHead(200, { 'content-type': rendered.contentType, 'x-report-code': '200' });
      pipeline(rendered.body as Readable, res, () => undefined);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(() => {
    server.close();
  });

  const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  for (const format of ['json', 'xml', 'html', 'xlsx'] as ResponseFormat[]) {
    it(`${format}: the client sees a cut-off body when the store fails mid-stream`, async () => {
      vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      next = () => ({ format, report: streamedReport(200_000, { failAfter: 100_000 }).report });
      const res = await request(url());
      expect(res.statusCode).toBe(200);
      await expect(res.body.arrayBuffer()).rejects.toThrow();
    });

    it(`${format}: a whole body otherwise`, async () => {
      next = () => ({ format, report: streamedReport(2_000).report });
      const res = await request(url());
      expect(res.statusCode).toBe(200);
      const body = Buffer.from(await res.body.arrayBuffer());
      if (format === 'json') {
        expect(JSON.parse(body.toString())).toHaveLength(2_000);
      } else {
        expect(body.length).toBeGreaterThan(10_000);
      }
    });
  }

  it('a client that leaves cancels the records', async () => {
    const { report, state } = streamedReport(1_000_000);
    next = () => ({ format: 'html', report });
    const res = await request(url());
    for await (const chunk of res.body) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    await vi.waitFor(() => expect(state.returned).toBe(true));
    expect(state.pulled).toBeLessThan(1_000_000);
  });
});
