export type RequestFormat = 'json' | 'xml';
export type ResponseFormat = 'json' | 'xml' | 'html' | 'xlsx';

export const RESPONSE_CONTENT_TYPES: Readonly<Record<ResponseFormat, string>> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  html: 'text/html; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

const ACCEPTED: Readonly<Record<string, ResponseFormat>> = {
  'application/json': 'json',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'text/html': 'html',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

const REQUEST_TYPES: Readonly<Record<string, RequestFormat>> = {
  'application/json': 'json',
  'text/xml': 'xml',
  'application/xml': 'xml',
};

function essence(mediaType: string): string {
  return mediaType.split(';')[0].trim().toLowerCase();
}

/** The request format named by Content-Type: undefined when absent, 'unsupported' for any other type. */
export function requestFormatOf(contentType: string | undefined): RequestFormat | 'unsupported' | undefined {
  if (contentType === undefined || contentType.trim() === '') return undefined;
  return REQUEST_TYPES[essence(contentType)] ?? 'unsupported';
}

/** Auto-detection when Content-Type is absent: the first significant character decides. */
export function sniffRequestFormat(body: string): RequestFormat | undefined {
  const first = body.replace(/^\uFEFF/, '').trimStart()[0];
  if (first === '<') return 'xml';
  if (first === '{' || first === '[') return 'json';
  return undefined;
}

/**
 * The response format: the most preferred of the four types in Accept, else the request's format.
 * An Accept that names none of them (or only wildcards) falls back to the request's format.
 */
export function negotiateResponseFormat(accept: string | undefined, fallback: RequestFormat): ResponseFormat {
  if (!accept) return fallback;
  const ranges = accept
    .split(',')
    .map((part, index) => {
      const [type, ...params] = part.split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { type: essence(type), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((r) => r.weight > 0 && ACCEPTED[r.type] !== undefined)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return ranges.length > 0 ? ACCEPTED[ranges[0].type] : fallback;
}
