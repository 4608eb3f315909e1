import { inflateRawSync } from 'node:zlib';
import { XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { type XlsxRow, escapeText, xlsxWorkbookStream } from './xlsx-workbook.writer';

interface ZipEntry {
  readonly name: string;
  /** General purpose flags of the local header: bit 3 says sizes and CRC follow the data. */
  readonly flags: number;
  readonly method: number;
  readonly text: string;
}

/** The entries of a zip, read through its central directory (no zip64: these are small). */
function unzip(zip: Buffer): ZipEntry[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const compressedSize = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataAt, dataAt + compressedSize);
    const method = zip.readUInt16LE(local + 8);
    entries.push({
      name,
      flags: zip.readUInt16LE(local + 6),
      method,
      text: (method === 8 ? inflateRawSync(data) : data).toString('utf8'),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

async function workbookOf(rows: XlsxRow[], onFailure: (error: Error) => void = () => undefined) {
  async function* source(): AsyncGenerator<XlsxRow> {
    for (const row of rows) {
      await Promise.resolve();
      yield row;
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of xlsxWorkbookStream(
    { name: 'Report & more', columnWidths: [12, 30], frozenHeader: true, rows: source() },
    onFailure,
  )) {
    chunks.push(chunk as Buffer);
  }
  return unzip(Buffer.concat(chunks));
}

// Characters XML 1.0 forbids: every control character but tab, line feed and carriage return, U+FFFE, U+FFFF.
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const NOT_XML = /[\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;

describe('xlsxWorkbookStream', () => {
  it('zips well-formed parts, the sheet deflated with a data descriptor', async () => {
    const entries = await workbookOf([
      { cells: ['name', 'count'], bold: true },
      { cells: ['a\u0001b\uFFFE <&> _x0041_', 7] },
      { cells: [null, Number.NaN] },
    ]);
    expect(entries.map((e) => e.name)).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'xl/workbook.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/styles.xml',
      'xl/worksheets/sheet1.xml',
    ]);
    for (const entry of entries) {
      expect(XMLValidator.validate(entry.text), entry.name).toBe(true);
      expect(NOT_XML.test(entry.text), entry.name).toBe(false);
    }
    const sheet = entries[entries.length - 1];
    expect(sheet.method).toBe(8);
    expect(sheet.flags & 0x8).toBe(0x8);
    expect(sheet.text).toContain(
      '<row r="1" s="1" customFormat="1"><c r="A1" s="1" t="inlineStr"><is><t>name</t></is></c>',
    );
    expect(sheet.text).toContain(
      '<c r="A2" t="inlineStr"><is><t>a_x0001_b_xFFFE_ &lt;&amp;&gt; _x005F_x0041_</t></is></c><c r="B2"><v>7</v></c>',
    );
    // No cell for null; a number no spreadsheet can hold is written as its text.
    expect(sheet.text).toContain('<row r="3"><c r="B3" t="inlineStr"><is><t>NaN</t></is></c></row>');
    expect(entries[2].text).toContain('<sheet name="Report &amp; more"');
  });

  it('passes a failure of the rows on and destroys the output with it', async () => {
    const failures: Error[] = [];
    async function* rows(): AsyncGenerator<XlsxRow> {
      yield { cells: ['ok'] };
      throw new Error('rows gone');
    }
    const output = xlsxWorkbookStream(
      { name: 'Report', columnWidths: [12], frozenHeader: false, rows: rows() },
      (error) => failures.push(error),
    );
    await expect(output.toArray()).rejects.toThrow('rows gone');
    expect(failures.map((e) => e.message)).toEqual(['rows gone']);
  });
});

describe('escapeText', () => {
  it.each([
    ['plain text', 'plain text'],
    ['<a href="x">&amp;</a>', '&lt;a href="x"&gt;&amp;amp;&lt;/a&gt;'],
    ['tab\tline\nfeed', 'tab\tline\nfeed'],
    ['carriage\r\nreturn', 'carriage&#13;\nreturn'],
    ['nul\0 bell\u0007 esc\u001b', 'nul_x0000_ bell_x0007_ esc_x001B_'],
    ['\uFFFE\uFFFF', '_xFFFE__xFFFF_'],
    ['del\u007f and C1\u0085 are allowed', 'del\u007f and C1\u0085 are allowed'],
    ['_x0041_ _X0041_ _x00_ _xabcd_', '_x005F_x0041_ _X0041_ _x00_ _x005F_xabcd_'],
    ['lone \uD800 and \uDC00, pair 🙂', 'lone \uFFFD and \uFFFD, pair 🙂'],
  ])('%j', (input, expected) => {
    expect(escapeText(input)).toBe(expected);
  });
});
