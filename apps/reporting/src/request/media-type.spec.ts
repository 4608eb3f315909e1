import { describe, expect, it } from 'vitest';
import { negotiateResponseFormat, requestFormatOf, sniffRequestFormat } from './media-type';

describe('request format', () => {
  it.each([
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['TEXT/XML', 'xml'],
    ['application/xml;charset=UTF-8', 'xml'],
    ['text/plain', 'unsupported'],
    ['multipart/form-data; boundary=x', 'unsupported'],
    [undefined, undefined],
    ['  ', undefined],
  ])('Content-Type %s -> %s', (header, format) => expect(requestFormatOf(header)).toBe(format));

  it.each([
    ['{"a":1}', 'json'],
    ['  \n[1]', 'json'],
    ['\uFEFF<data/>', 'xml'],
    ['id=1', undefined],
  ])('sniffs %j as %s', (body, format) => expect(sniffRequestFormat(body)).toBe(format));
});

describe('response negotiation', () => {
  it.each([
    [undefined, 'xml', 'xml'],
    ['*/*', 'json', 'json'],
    ['text/html', 'json', 'html'],
    ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'json', 'xlsx'],
    ['text/csv, application/xml', 'json', 'xml'],
    ['text/html;q=0.2, application/json;q=0.8', 'xml', 'json'],
    ['application/json;q=0, text/html', 'json', 'html'],
    ['image/png', 'xml', 'xml'],
  ] as const)('Accept %s with a %s request -> %s', (accept, fallback, format) =>
    expect(negotiateResponseFormat(accept, fallback)).toBe(format),
  );
});
