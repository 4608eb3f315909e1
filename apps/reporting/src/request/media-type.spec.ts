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
    // Wildcards keep the request's format; a wildcard subtype picks our type of that family.
    ['*/*', 'xml', 'xml'],
    ['application/*', 'xml', 'xml'],
    ['application/*', 'json', 'json'],
    ['text/*', 'xml', 'xml'],
    ['text/*, application/json;q=0.5', 'json', 'html'],
    // The most specific range decides a type's q-value.
    ['*/*;q=0.1, text/html;q=0.5, application/xml', 'json', 'xml'],
    ['text/html, */*;q=0', 'xml', 'html'],
    ['*/*;q=0', 'json', 'json'],
    // Equal q-values: the order written.
    ['application/xml, application/json', 'json', 'xml'],
    ['text/xml;q=0.9, application/json;q=0.9', 'json', 'xml'],
    // Parameters: our charset matches, another does not.
    ['application/json; charset=UTF-8', 'xml', 'json'],
    ['text/html;charset=iso-8859-1', 'json', 'json'],
    ['TEXT/HTML', 'json', 'html'],
    ['  text/html  ;  q=0.7 , application/xml;q=0.6', 'json', 'html'],
    // Garbage never throws and keeps the request's format.
    ['', 'xml', 'xml'],
    ['   ', 'json', 'json'],
    ['garbage', 'xml', 'xml'],
    [';;;,,,', 'json', 'json'],
    ['text/html;q=abc', 'json', 'json'],
    ['text/html;q=-1', 'xml', 'xml'],
    ['application/json;q=0.5;a="unterminated', 'xml', 'json'],
    ['\u00ff/\u00fe', 'json', 'json'],
  ] as const)('Accept %s with a %s request -> %s', (accept, fallback, format) =>
    expect(negotiateResponseFormat(accept, fallback)).toBe(format),
  );
});
