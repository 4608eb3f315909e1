import { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import escapeHtml from 'escape-html';
import { create } from 'xmlbuilder2';
import type { CellValue, Report, ReportRecord } from '../report/report-builder';
import type { ColumnNamesOption, ColumnTotalsOption } from '../report/report-planner';
import { RESPONSE_CONTENT_TYPES, type ResponseFormat } from '../request/media-type';
import { type XlsxCell, type XlsxRow, xlsxWorkbookStream } from './xlsx-workbook.writer';

export interface Layout {
  readonly columnNames: ColumnNamesOption;
  readonly columnTotals: ColumnTotalsOption;
}

export interface RenderedBody {
  readonly contentType: string;
  readonly body: string | Readable;
}

/**
 * Reporting part 4.4 (docs/specification-notes.md#reporting-part-4-4): names and totals are on for
 * spreadsheets and HTML, off otherwise, unless asked.
 */
export function layoutFor(
  format: ResponseFormat,
  columnNames: ColumnNamesOption | undefined,
  columnTotals: ColumnTotalsOption | undefined,
): Layout {
  const tabular = format === 'xlsx' || format === 'html';
  return {
    columnNames: columnNames ?? (tabular ? 'top' : 'off'),
    columnTotals: columnTotals ?? (tabular ? 'bottom' : 'off'),
  };
}

function namesRecord(fields: readonly string[]): ReportRecord {
  return Object.fromEntries(fields.map((f) => [f, f]));
}

/** The records in response order: names, totals on top, data, totals at the bottom. */
async function* sequence(report: Report, layout: Layout): AsyncGenerator<ReportRecord, void, undefined> {
  if (layout.columnNames === 'top') {
    yield namesRecord(report.fields);
  }
  if (layout.columnTotals === 'top') {
    yield report.totals;
  }
  for await (const record of report.records) {
    yield record;
  }
  // Read only now: the totals of a streamed report are summed as its records pass.
  if (layout.columnTotals === 'bottom') {
    yield report.totals;
  }
}

const text = (value: CellValue): string => (value === null ? '' : String(value));

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** XML character data: every `&`, `<` and `>` escaped. */
function escapeXml(value: string): string {
  return /[&<>]/.test(value) ? value.replace(/[&<>]/g, (c) => XML_ESCAPES[c]) : value;
}

const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25rem .6rem}td.n{text-align:right}thead th{background:#f3f3f3}tfoot td,tr.totals td{font-weight:bold}';

/** A page's text before and after its body. */
function htmlPageParts(title: string): [string, string] {
  return [
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>\n<style>${PAGE_STYLE}</style>\n</head><body>`,
    '</body></html>\n',
  ];
}

function htmlPage(title: string, body: string): string {
  const [start, end] = htmlPageParts(title);
  return `${start}${body}${end}`;
}

/** Text goes out in pieces of about this many characters: few writes, little held. */
const PIECE_CHARS = 64 * 1024;

/** Collects small strings into pieces of about PIECE_CHARS. */
class Pieces {
  private parts: string[] = [];
  size = 0;

  add(part: string): void {
    this.parts.push(part);
    this.size += part.length;
  }

  get full(): boolean {
    return this.size >= PIECE_CHARS;
  }

  take(): string {
    const piece = this.parts.join('');
    this.parts = [];
    this.size = 0;
    return piece;
  }
}

/**
 * Text made of a head, the records one after another and a tail, in pieces. The first piece goes
 * out as soon as the first record is in it: the response starts (headers and first byte) before
 * the store is read any further.
 */
async function* pieces(
  report: Report,
  layout: Layout,
  head: string,
  each: (record: ReportRecord, index: number) => string,
  tail: () => string,
): AsyncGenerator<string, void, undefined> {
  const out = new Pieces();
  out.add(head);
  let index = 0;
  for await (const record of sequence(report, layout)) {
    out.add(each(record, index));
    index += 1;
    if (index === 1 || out.full) {
      yield out.take();
    }
  }
  out.add(tail());
  yield out.take();
}

/**
 * Writes reports as they are read: every format is a stream that pulls the next records only when
 * the client has taken the previous ones (a Readable, so piping honours `write()` returning false
 * and 'drain'). A failure once the body has started is logged here and destroys the stream; the
 * controller's pipeline then destroys the response, and the client sees a cut-off body.
 */
@Injectable()
export class ReportRendererService {
  private readonly logger = new Logger('ReportRenderer');

  render(report: Report, format: ResponseFormat, layout: Layout): RenderedBody {
    const contentType = RESPONSE_CONTENT_TYPES[format];
    switch (format) {
      case 'json':
        return { contentType, body: this.text(format, this.json(report, layout)) };
      case 'xml':
        return { contentType, body: this.text(format, this.xml(report, layout)) };
      case 'html':
        return { contentType, body: this.text(format, this.html(report, layout)) };
      case 'xlsx':
        return { contentType, body: this.xlsx(report, layout) };
    }
  }

  renderError(code: number, message: string, format: ResponseFormat): RenderedBody {
    switch (format) {
      case 'xml':
        return {
          contentType: RESPONSE_CONTENT_TYPES.xml,
          body: create({ version: '1.0', encoding: 'UTF-8' })
            .ele('root')
            .ele('error')
            .ele('code')
            .txt(String(code))
            .up()
            .ele('message')
            .txt(message)
            .doc()
            .end(),
        };
      case 'html':
        return {
          contentType: RESPONSE_CONTENT_TYPES.html,
          body: htmlPage(
            `Error ${code}`,
            `<h1>Error ${code}</h1><p class="message">${escapeHtml(message)}</p><p>Code: <code>${code}</code></p>`,
          ),
        };
      case 'json':
      case 'xlsx':
        return {
          contentType: RESPONSE_CONTENT_TYPES.json,
          body: JSON.stringify({ error: { code, message } }),
        };
    }
  }

  private failed(format: ResponseFormat, error: unknown): void {
    const cause = (error as { cause?: unknown }).cause;
    this.logger.error(
      `the ${format} report failed after its response began; the response is cut off: ${
        error instanceof Error ? (error.stack ?? error.message) : String(error)
      }${cause instanceof Error ? ` (cause: ${cause.message})` : ''}`,
    );
  }

  private text(format: ResponseFormat, source: AsyncIterable<string>): Readable {
    const failed = (error: unknown) => this.failed(format, error);
    async function* guarded(): AsyncGenerator<string, void, undefined> {
      try {
        yield* source;
      } catch (error) {
        failed(error);
        throw error;
      }
    }
    // Pieces stay strings (at most two waiting): the socket encodes them as it writes them, where
    // Buffers of each piece would be garbage for the GC to find (tens of MiB for a large report).
    return Readable.from(guarded(), { objectMode: true, highWaterMark: 2 });
  }

  /** A JSON array, one record after another: the same text as `JSON.stringify` of the array. */
  private json(report: Report, layout: Layout): AsyncIterable<string> {
    return pieces(
      report,
      layout,
      '[',
      (record, i) => (i === 0 ? JSON.stringify(record) : `,${JSON.stringify(record)}`),
      () => ']',
    );
  }

  /**
   * `<root>` and every record's fields one after another, as xmlbuilder2 wrote them: the
   * declaration, no whitespace, `<root/>` when empty. Text escapes `&`, `<` and `>`.
   */
  private xml(report: Report, layout: Layout): AsyncIterable<string> {
    const open = report.fields.map((f) => `<${f}>`);
    const close = report.fields.map((f) => `</${f}>`);
    let empty = true;
    return pieces(
      report,
      layout,
      '<?xml version="1.0" encoding="UTF-8"?><root',
      (record, i) => {
        empty = false;
        let xml = i === 0 ? '>' : '';
        for (let f = 0; f < report.fields.length; f += 1) {
          xml += `${open[f]}${escapeXml(text(record[report.fields[f]] ?? null))}${close[f]}`;
        }
        return xml;
      },
      () => (empty ? '/>' : '</root>'),
    );
  }

  private html(report: Report, layout: Layout): AsyncIterable<string> {
    const cells = (record: ReportRecord, tag: 'td' | 'th') =>
      report.fields
        .map((f) => {
          const numeric = tag === 'td' && typeof record[f] === 'number' ? ' class="n"' : '';
          return `<${tag}${numeric}>${escapeHtml(text(record[f] ?? null))}</${tag}>`;
        })
        .join('');
    const [start, end] = htmlPageParts('Report');
    const head =
      layout.columnNames === 'top'
        ? `<thead><tr>${cells(namesRecord(report.fields), 'th')}</tr></thead>`
        : '';
    // Names and totals have their own places in the table: only the data (and totals on top) are body rows.
    const body: Layout = { columnNames: 'off', columnTotals: layout.columnTotals === 'top' ? 'top' : 'off' };
    return pieces(
      report,
      body,
      `${start}<table>${head}<tbody>`,
      (record, i) => {
        const totals = i === 0 && layout.columnTotals === 'top';
        return `${i === 0 ? '' : '\n'}<tr${totals ? ' class="totals"' : ''}>${cells(record, 'td')}</tr>`;
      },
      () =>
        `</tbody>${layout.columnTotals === 'bottom' ? `<tfoot><tr>${cells(report.totals, 'td')}</tr></tfoot>` : ''}</table>${end}`,
    );
  }

  /**
   * The workbook written as its rows are read (see xlsxWorkbookStream): numbers as numbers, other
   * values as text, the header and totals rows bold, the header frozen.
   */
  private xlsx(report: Report, layout: Layout): Readable {
    const numeric = report.fields.map((f) => report.numericFields.has(f));
    const cells = (record: ReportRecord): XlsxCell[] =>
      report.fields.map((f, i) => {
        const v = record[f] ?? null;
        return numeric[i] && typeof v === 'number' ? v : v === null ? null : String(v);
      });
    async function* rows(): AsyncGenerator<XlsxRow, void, undefined> {
      if (layout.columnNames === 'top') {
        yield { cells: report.fields, bold: true };
      }
      if (layout.columnTotals === 'top') {
        yield { cells: cells(report.totals), bold: true };
      }
      for await (const record of report.records) {
        yield { cells: cells(record) };
      }
      // Read only now: the totals of a streamed report are summed as its records pass.
      if (layout.columnTotals === 'bottom') {
        yield { cells: cells(report.totals), bold: true };
      }
    }
    return xlsxWorkbookStream(
      {
        name: 'Report',
        columnWidths: report.fields.map((f) => Math.max(12, f.length + 2)),
        frozenHeader: layout.columnNames === 'top',
        rows: rows(),
      },
      (error) => this.failed('xlsx', error),
    );
  }
}
