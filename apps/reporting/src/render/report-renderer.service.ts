import { PassThrough, type Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import escapeHtml from 'escape-html';
import ExcelJS from 'exceljs';
import { create } from 'xmlbuilder2';
import type { CellValue, Report, ReportRecord } from '../report/report-builder';
import type { ColumnNamesOption, ColumnTotalsOption } from '../report/report-planner';
import { RESPONSE_CONTENT_TYPES, type ResponseFormat } from '../request/media-type';

export interface Layout {
  readonly columnNames: ColumnNamesOption;
  readonly columnTotals: ColumnTotalsOption;
}

export interface RenderedBody {
  readonly contentType: string;
  readonly body: string | Readable;
}

/** Part 4.4: names and totals are on for spreadsheets and HTML, off otherwise, unless asked. */
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
function sequence(report: Report, layout: Layout): ReportRecord[] {
  const out: ReportRecord[] = [];
  if (layout.columnNames === 'top') out.push(namesRecord(report.fields));
  if (layout.columnTotals === 'top') out.push(report.totals);
  out.push(...report.records);
  if (layout.columnTotals === 'bottom') out.push(report.totals);
  return out;
}

const text = (value: CellValue): string => (value === null ? '' : String(value));

function htmlPage(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25rem .6rem}td.n{text-align:right}thead th{background:#f3f3f3}tfoot td,tr.totals td{font-weight:bold}</style>
</head><body>${body}</body></html>\n`;
}

@Injectable()
export class ReportRendererService {
  render(report: Report, format: ResponseFormat, layout: Layout): RenderedBody {
    const contentType = RESPONSE_CONTENT_TYPES[format];
    switch (format) {
      case 'json':
        return { contentType, body: JSON.stringify(sequence(report, layout)) };
      case 'xml':
        return { contentType, body: this.xml(sequence(report, layout), report.fields) };
      case 'html':
        return { contentType, body: this.html(report, layout) };
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

  private xml(records: readonly ReportRecord[], fields: readonly string[]): string {
    const root = create({ version: '1.0', encoding: 'UTF-8' }).ele('root');
    for (const record of records)
      for (const field of fields) root.ele(field).txt(text(record[field] ?? null));
    return root.end();
  }

  private html(report: Report, layout: Layout): string {
    const cells = (record: ReportRecord, tag: 'td' | 'th') =>
      report.fields
        .map((f) => {
          const numeric = tag === 'td' && typeof record[f] === 'number' ? ' class="n"' : '';
          return `<${tag}${numeric}>${escapeHtml(text(record[f] ?? null))}</${tag}>`;
        })
        .join('');
    const head: string[] = [];
    if (layout.columnNames === 'top') head.push(`<tr>${cells(namesRecord(report.fields), 'th')}</tr>`);
    const body = report.records.map((r) => `<tr>${cells(r, 'td')}</tr>`);
    if (layout.columnTotals === 'top') body.unshift(`<tr class="totals">${cells(report.totals, 'td')}</tr>`);
    const foot =
      layout.columnTotals === 'bottom' ? `<tfoot><tr>${cells(report.totals, 'td')}</tr></tfoot>` : '';
    const table = `<table>${head.length ? `<thead>${head.join('')}</thead>` : ''}<tbody>${body.join('\n')}</tbody>${foot}</table>`;
    return htmlPage('Report', table);
  }

  /** Streams the workbook row by row, so that memory stays flat for large reports. */
  private xlsx(report: Report, layout: Layout): Readable {
    const stream = new PassThrough();
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      stream,
      useStyles: true,
      useSharedStrings: false,
    });
    const frozen = layout.columnNames === 'top' ? [{ state: 'frozen' as const, ySplit: 1 }] : [];
    const sheet = workbook.addWorksheet('Report', { views: frozen });
    sheet.columns = report.fields.map((f) => ({ key: f, width: Math.max(12, f.length + 2) }));
    const values = (record: ReportRecord) =>
      report.fields.map((f) => {
        const v = record[f] ?? null;
        return report.numericFields.has(f) && typeof v === 'number' ? v : v === null ? null : String(v);
      });
    const bold = (row: ExcelJS.Row) => {
      row.font = { bold: true };
    };
    void (async () => {
      try {
        if (layout.columnNames === 'top') {
          const row = sheet.addRow(report.fields.slice());
          bold(row);
          row.commit();
        }
        if (layout.columnTotals === 'top') {
          const row = sheet.addRow(values(report.totals));
          bold(row);
          row.commit();
        }
        for (const record of report.records) sheet.addRow(values(record)).commit();
        if (layout.columnTotals === 'bottom') {
          const row = sheet.addRow(values(report.totals));
          bold(row);
          row.commit();
        }
        sheet.commit();
        await workbook.commit();
      } catch (error) {
        stream.destroy(error as Error);
      }
    })();
    return stream;
  }
}
