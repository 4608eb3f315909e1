import Negotiator from 'negotiator';

export type RequestFormat = 'json' | 'xml';
export type ResponseFormat = 'json' | 'xml' | 'html' | 'xlsx';

export const RESPONSE_CONTENT_TYPES: Readonly<Record<ResponseFormat, string>> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  html: 'text/html; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** The media types a client may ask for in Accept, each format's preferred one first. */
const ACCEPTED: Readonly<Record<ResponseFormat, readonly string[]>> = {
  json: ['application/json'],
  xml: ['application/xml', 'text/xml'],
  html: ['text/html'],
  xlsx: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
};

const REQUEST_TYPES: Readonly<Record<string, RequestFormat>> = {
  'application/json': 'json',
  'text/xml': 'xml',
  'application/xml': 'xml',
};

function essence(mediaType: string): string {
  return mediaType.split(';')[0].trim().toLowerCase();
}

/**
 * What Negotiator may choose from for a request of that format, in the order it breaks ties: the
 * request's own format first, so that wildcards (any type, or any `application/` subtype) keep it,
 * then HTML before XML for `text/` any subtype. Every type is offered bare and with `charset=utf-8`
 * (what we send), since Negotiator matches a range's parameters exactly.
 */
function offeredTypes(fallback: RequestFormat): { types: string[]; formatOf: Map<string, ResponseFormat> } {
  const order: ResponseFormat[] = [fallback, 'json', 'html', 'xml', 'xlsx'];
  const formatOf = new Map<string, ResponseFormat>();
  for (const format of order) {
    for (const type of ACCEPTED[format]) {
      if (formatOf.has(type)) {
        continue;
      }
      formatOf.set(type, format);
      formatOf.set(`${type}; charset=utf-8`, format);
    }
  }
  return { types: [...formatOf.keys()], formatOf };
}

const OFFERED: Readonly<Record<RequestFormat, ReturnType<typeof offeredTypes>>> = {
  json: offeredTypes('json'),
  xml: offeredTypes('xml'),
};

/** The request format named by Content-Type: undefined when absent, 'unsupported' for any other type. */
export function requestFormatOf(contentType: string | undefined): RequestFormat | 'unsupported' | undefined {
  if (contentType === undefined || contentType.trim() === '') {
    return undefined;
  }
  return REQUEST_TYPES[essence(contentType)] ?? 'unsupported';
}

/** Auto-detection when Content-Type is absent: the first significant character decides. */
export function sniffRequestFormat(body: string): RequestFormat | undefined {
  const first = body.replace(/^\uFEFF/, '').trimStart()[0];
  if (first === '<') {
    return 'xml';
  }
  if (first === '{' || first === '[') {
    return 'json';
  }
  return undefined;
}

/**
 * The response format (reporting part 4.5, docs/specification-notes.md#reporting-part-4-5): the client's most
 * preferred of our types in Accept, by q-value and specificity (RFC 9110, 12.5.1, through Negotiator), else
 * the request's format. An absent or empty Accept, one that names none of our types, and a bare wildcard keep
 * the request's format.
 */
export function negotiateResponseFormat(accept: string | undefined, fallback: RequestFormat): ResponseFormat {
  if (!accept?.trim()) {
    return fallback;
  }
  const { types, formatOf } = OFFERED[fallback];
  const chosen = new Negotiator({ headers: { accept } }).mediaType(types);
  return chosen === undefined ? fallback : (formatOf.get(chosen) ?? fallback);
}
