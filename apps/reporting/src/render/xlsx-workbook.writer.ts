import type { PassThrough } from 'node:stream';
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';

/** A cell: a number is written as a number, a string as text, null as no cell. */
export type XlsxCell = string | number | null;

export interface XlsxRow {
  readonly cells: readonly XlsxCell[];
  readonly bold?: boolean;
}

export interface XlsxSheet {
  readonly name: string;
  /** Width of each column, in characters. */
  readonly columnWidths: readonly number[];
  /** Whether the first row stays in view while scrolling (a header row). */
  readonly frozenHeader: boolean;
  readonly rows: AsyncIterable<XlsxRow>;
}

const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const SHEET_PATH = 'xl/worksheets/sheet1.xml';

/** Style 0 is plain, style 1 bold (the header and totals rows). */
const BOLD = 1;

const FONT = '<sz val="11"/><name val="Calibri"/><family val="2"/><scheme val="minor"/>';

/** The parts around the sheet, in the order they are zipped: all small, all known before any row. */
function packageParts(sheet: XlsxSheet): [string, string][] {
  return [
    [
      '[Content_Types].xml',
      `${DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
        `<Override PartName="/${SHEET_PATH}" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>` +
        '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
        '</Types>',
    ],
    [
      '_rels/.rels',
      `${DECLARATION}<Relationships xmlns="${PKG_REL_NS}">` +
        `<Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/>` +
        '</Relationships>',
    ],
    [
      'xl/workbook.xml',
      `${DECLARATION}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><bookViews><workbookView/></bookViews>` +
        `<sheets><sheet name="${escapeText(sheet.name)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `${DECLARATION}<Relationships xmlns="${PKG_REL_NS}">` +
        `<Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>` +
        `<Relationship Id="rId2" Type="${REL_NS}/styles" Target="styles.xml"/>` +
        '</Relationships>',
    ],
    [
      'xl/styles.xml',
      `${DECLARATION}<styleSheet xmlns="${MAIN_NS}">` +
        `<fonts count="2"><font>${FONT}</font><font><b/>${FONT}</font></fonts>` +
        '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
        '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
        '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
        '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
        '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>' +
        '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
        '</styleSheet>',
    ],
  ];
}

/** The sheet's text before its first row. */
function sheetHead(sheet: XlsxSheet): string {
  const view = sheet.frozenHeader
    ? '<sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>' +
      '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/></sheetView>'
    : '<sheetView workbookViewId="0"/>';
  const cols = sheet.columnWidths
    .map((width, i) => `<col min="${i + 1}" max="${i + 1}" width="${width}" customWidth="1"/>`)
    .join('');
  return (
    `${DECLARATION}<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheetViews>${view}</sheetViews>` +
    `<sheetFormatPr defaultRowHeight="15"/>${cols ? `<cols>${cols}</cols>` : ''}<sheetData>`
  );
}

const SHEET_TAIL =
  '</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>';

/** `A`, `B`, … `Z`, `AA`, … for the column at index i. */
function columnName(i: number): string {
  let name = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  }
  return name;
}

/**
 * What XML 1.0 text cannot hold as it is: markup characters; a carriage return, which parsers turn
 * into a line feed; the control characters but tab, line feed and carriage return, and U+FFFE and
 * U+FFFF, which no XML document may contain; an underscore that starts `_xHHHH_`, which Excel
 * would read as an escape; and lone surrogates, which have no UTF-8 form.
 */
const TEXT_HAZARDS =
  // eslint-disable-next-line no-control-regex -- control characters are what it finds
  /[&<>\r\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Cell text as XML character data. Characters XML cannot carry take the spreadsheet escape
 * `_xHHHH_` (ECMA-376 ST_Xstring, which Excel and LibreOffice decode), as does the underscore of a
 * literal `_xHHHH_`; a lone surrogate becomes U+FFFD, as UTF-8 encoding would make it anyway.
 */
export function escapeText(value: string): string {
  return value.replace(TEXT_HAZARDS, (c) => {
    switch (c) {
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      case '>':
        return '&gt;';
      case '\r':
        return '&#13;';
      default:
        return c.length === 1 && c >= '\uD800' && c <= '\uDFFF'
          ? '\uFFFD'
          : `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`;
    }
  });
}

/** Leading or trailing blanks, tabs and line breaks are kept only under xml:space="preserve". */
const NEEDS_PRESERVE = /^\s|\s$|[\t\n\r]/;

function rowXml(row: number, columns: readonly string[], { cells, bold }: XlsxRow): string {
  const style = bold ? ` s="${BOLD}"` : '';
  let xml = `<row r="${row}"${bold ? ` s="${BOLD}" customFormat="1"` : ''}>`;
  for (let i = 0; i < cells.length; i += 1) {
    const value = cells[i];
    if (value === null) {
      continue;
    }
    const ref = `${columns[i]}${row}`;
    if (typeof value === 'number' && Number.isFinite(value)) {
      xml += `<c r="${ref}"${style}><v>${value}</v></c>`;
    } else {
      // Inline strings, not the shared string table: nothing to keep across rows. A number that
      // is not finite (no spreadsheet number can hold it) is written as its text.
      const text = String(value);
      const space = NEEDS_PRESERVE.test(text) ? ' xml:space="preserve"' : '';
      xml += `<c r="${ref}"${style} t="inlineStr"><is><t${space}>${escapeText(text)}</t></is></c>`;
    }
  }
  return `${xml}</row>`;
}

/** The sheet goes to the zip in pieces of about this many characters. */
const PIECE_CHARS = 64 * 1024;

async function* sheetXml(sheet: XlsxSheet): AsyncGenerator<Buffer, void, undefined> {
  const columns = sheet.columnWidths.map((_, i) => columnName(i));
  let piece = sheetHead(sheet);
  let row = 0;
  for await (const next of sheet.rows) {
    row += 1;
    piece += rowXml(row, columns, next);
    if (piece.length >= PIECE_CHARS) {
      yield Buffer.from(piece);
      piece = '';
    }
  }
  yield Buffer.from(piece + SHEET_TAIL);
}

/**
 * A workbook of one sheet, written as its rows are read: the sheet's XML is made row by row and
 * deflated into the zip as it goes (sizes and CRC in a data descriptor after the data), so memory
 * does not grow with the rows, and the next rows are read only when the output has been taken.
 * Closing the output early stops reading the rows (their iterator is returned). A failure of the
 * rows is passed to `onFailure` and destroys the output with it.
 */
export function xlsxWorkbookStream(sheet: XlsxSheet, onFailure: (error: Error) => void): Readable {
  const zip = new ZipFile();
  const output = zip.outputStream as PassThrough;
  const mtime = new Date();
  for (const [name, text] of packageParts(sheet)) {
    zip.addBuffer(Buffer.from(text), name, { mtime });
  }
  const body = Readable.from(sheetXml(sheet), { objectMode: false });
  const fail = (error: Error) => {
    onFailure(error);
    output.destroy(error);
  };
  body.once('error', fail);
  zip.once('error', fail);
  output.once('close', () => body.destroy());
  zip.addReadStream(body, SHEET_PATH, { mtime });
  zip.end();
  return output;
}
