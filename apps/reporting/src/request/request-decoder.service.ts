import { Injectable } from '@nestjs/common';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ReportCode } from '@app/report-model';
import { ReportingException } from '../reporting.exception';
import { requestFormatOf, sniffRequestFormat, type RequestFormat } from './media-type';

export interface DecodedRequest {
  readonly format: RequestFormat;
  readonly body: Record<string, unknown>;
}

/**
 * Elements that are arrays in the request model: in XML they repeat
 * (docs/specification-notes.md#reporting-part-4-1).
 */
const XML_ARRAYS = new Set(['data.splits', 'data.columns', 'data.filters', 'data.filters.values']);
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 8;

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  isArray: (_name, jpath) => XML_ARRAYS.has(String(jpath)),
});

function invalid(detail: string): ReportingException {
  return new ReportingException(ReportCode.InvalidInput, detail);
}

/** Rejects keys that could reach an object's prototype, and absurd nesting. */
function assertPlainData(value: unknown, depth = 0): void {
  if (depth > MAX_DEPTH) {
    throw invalid('the request is nested too deeply');
  }
  if (Array.isArray(value)) {
    for (const item of value) {
      assertPlainData(item, depth + 1);
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        throw invalid(`field name ${key} is not allowed`);
      }
      assertPlainData(item, depth + 1);
    }
  }
}

/** Turns the raw body into the request object, whatever its format. */
@Injectable()
export class RequestDecoderService {
  decode(raw: Buffer, contentType: string | undefined): DecodedRequest {
    const declared = requestFormatOf(contentType);
    if (declared === 'unsupported') {
      throw new ReportingException(
        ReportCode.InvalidContentType,
        'Content-Type must be application/json, text/xml or application/xml',
      );
    }
    const text = raw.toString('utf8');
    if (text.trim() === '') {
      throw new ReportingException(ReportCode.MissingParameter, 'the request body is empty');
    }
    const format = declared ?? sniffRequestFormat(text);
    if (format === undefined) {
      throw new ReportingException(ReportCode.InvalidContentType, 'the body is neither JSON nor XML');
    }
    const body = format === 'json' ? this.parseJson(text) : this.parseXml(text);
    assertPlainData(body);
    return { format, body };
  }

  private parseJson(text: string): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw invalid(`malformed JSON: ${(error as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw invalid('the JSON body must be an object');
    }
    return parsed as Record<string, unknown>;
  }

  private parseXml(text: string): Record<string, unknown> {
    if (/<!DOCTYPE|<!ENTITY/i.test(text)) {
      throw invalid('XML with a DOCTYPE or entity declarations is not accepted');
    }
    let parsed: Record<string, unknown>;
    try {
      const valid = XMLValidator.validate(text);
      if (valid !== true) {
        throw invalid(`malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
      }
      parsed = xmlParser.parse(text) as Record<string, unknown>;
    } catch (error) {
      // The parser's own refusals (nesting past its limit, reserved tag names, entity limits) are
      // invalid input like any other.
      if (error instanceof ReportingException) {
        throw error;
      }
      throw invalid(`malformed XML: ${(error as Error).message}`);
    }
    const roots = Object.keys(parsed);
    if (roots.length !== 1 || roots[0] !== 'data') {
      throw invalid('the XML root element must be <data>');
    }
    const data = parsed.data;
    if (data === '' || data === undefined) {
      return {};
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw invalid('<data> must hold elements');
    }
    return data as Record<string, unknown>;
  }
}
