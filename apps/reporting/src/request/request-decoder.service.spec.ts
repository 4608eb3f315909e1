import { describe, expect, it } from 'vitest';
import { ReportCode } from '@app/report-model';
import { type ReportingException } from '../reporting.exception';
import { RequestDecoderService } from './request-decoder.service';

const decoder = new RequestDecoderService();
const decode = (body: string, type?: string) => decoder.decode(Buffer.from(body), type);
const codeOf = (fn: () => unknown): ReportCode | undefined => {
  try {
    fn();
  } catch (error) {
    return (error as ReportingException).code;
  }
  return undefined;
};

describe('RequestDecoderService', () => {
  it('reads repeated XML elements as arrays and nested ones as objects, all values as text', () => {
    const { format, body } = decode(
      `<?xml version="1.0" encoding="UTF-8"?>
      <data><seed>1700000000</seed><splits>day</splits><columns>clicks</columns><columns>ctr</columns>
      <filters><dimension>country</dimension><operator>equals</operator><values>US</values></filters>
      <sort><clicks>desc</clicks></sort><note>a &amp; b</note></data>`,
      'application/xml',
    );
    expect(format).toBe('xml');
    expect(body).toEqual({
      seed: '1700000000',
      splits: ['day'],
      columns: ['clicks', 'ctr'],
      filters: [{ dimension: 'country', operator: 'equals', values: ['US'] }],
      sort: { clicks: 'desc' },
      note: 'a & b',
    });
  });

  it('refuses DOCTYPEs and entity declarations before parsing', () => {
    expect(codeOf(() => decode('<!DOCTYPE data><data/>', 'text/xml'))).toBe(ReportCode.InvalidInput);
    expect(codeOf(() => decode('<data><!ENTITY x "y"></data>', 'text/xml'))).toBe(ReportCode.InvalidInput);
  });

  it('refuses prototype keys at any depth', () => {
    expect(codeOf(() => decode('{"filters":[{"constructor":{"prototype":1}}]}', 'application/json'))).toBe(
      ReportCode.InvalidInput,
    );
  });

  it('refuses absurd nesting', () => {
    expect(
      codeOf(() =>
        decode(
          `${'['.repeat(50)}${']'.repeat(50)}`.replace(/^\[/, '{"a":[').replace(/\]$/, ']}'),
          'application/json',
        ),
      ),
    ).toBe(ReportCode.InvalidInput);
  });

  it.each([
    ['nesting past the parser limit', `<data>${'<a>'.repeat(150)}x${'</a>'.repeat(150)}</data>`],
    ['nesting far past it', `<data>${'<a>'.repeat(20_000)}${'</a>'.repeat(20_000)}</data>`],
    ['nesting past ours only', `<data>${'<a>'.repeat(9)}x${'</a>'.repeat(9)}</data>`],
    ['a tag named constructor', '<data><constructor>1</constructor></data>'],
    ['a tag named __proto__', '<data><__proto__><admin>1</admin></__proto__></data>'],
    ['a tag named prototype', '<data><sort><prototype>asc</prototype></sort></data>'],
    ['a root named constructor', '<constructor/>'],
    ['two roots', '<data/><data/>'],
    ['text beside the root', 'x<data/>'],
    ['a processing instruction only', '<?xml version="1.0"?>'],
  ])('refuses XML with %s as invalid input, never as an internal error', (_name, xml) => {
    expect(codeOf(() => decode(xml, 'application/xml'))).toBe(ReportCode.InvalidInput);
  });

  it('refuses JSON nested far past the limit without exhausting the stack', () => {
    const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(codeOf(() => decode(deep, 'application/json'))).toBe(ReportCode.InvalidInput);
  });

  it('detects the format when Content-Type is absent', () => {
    expect(decode('{"id":"x"}').format).toBe('json');
    expect(decode('<data><id>x</id></data>').format).toBe('xml');
    expect(codeOf(() => decode('id=x'))).toBe(ReportCode.InvalidContentType);
  });
});
