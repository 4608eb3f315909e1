import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Echoed on every answer of the bid endpoint, as the bidding specification recommends
 * (docs/specification-notes.md#bidding-part-1).
 */
export const OPENRTB_VERSION_HEADER = { 'x-openrtb-version': '2.5' } as const;

export function reply(
  res: ServerResponse,
  status: number,
  headers: OutgoingHttpHeaders,
  body: string | Buffer = '',
): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The bid endpoint's answer, written without intermediate objects as it runs thousands of times a second. */
export function replyJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'x-openrtb-version': '2.5',
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function replyText(res: ServerResponse, status: number, body: string): void {
  reply(res, status, { 'content-type': 'text/plain; charset=utf-8' }, body);
}

/** 204 carries no body and so no content-length. */
export function replyNoContent(res: ServerResponse, headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(204, headers);
  res.end();
}
