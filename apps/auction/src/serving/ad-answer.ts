import type { ServerResponse } from 'node:http';

/** A 1x1 transparent GIF: what an image tag gets when there is no ad to show. */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

/** Mail clients and proxies cache images hard; every open must reach us to be counted. */
const NO_STORE = [
  'Cache-Control',
  'no-cache, no-store, must-revalidate, private, max-age=0',
  'Pragma',
  'no-cache',
  'Expires',
  '0',
] as const;

const PIXEL_HEADERS = [
  ...NO_STORE,
  'Content-Type',
  'image/gif',
  'Content-Length',
  String(TRANSPARENT_GIF.length),
];

/**
 * The answers are written with every header at once (`writeHead` with a list: node's fast path);
 * `extra` holds more headers as name, value, name, value. Headers set before with `setHeader` are
 * kept too.
 */
export function sendPixel(res: ServerResponse, status = 200, extra: readonly string[] = []): void {
  res
    .writeHead(status, extra.length === 0 ? PIXEL_HEADERS : [...PIXEL_HEADERS, ...extra])
    .end(TRANSPARENT_GIF);
}

/** A redirect that no mail client or proxy may cache (an ad, a landing page, the next sync hop). */
export function sendRedirect(res: ServerResponse, location: string, extra: readonly string[] = []): void {
  res.writeHead(302, [...NO_STORE, 'Location', location, 'Content-Length', '0', ...extra]).end();
}
