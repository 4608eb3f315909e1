import type { ServerResponse } from 'node:http';

/** A 1x1 transparent GIF: what an image tag gets when there is no ad to show. */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

/** Mail clients and proxies cache images hard; every open must reach us to be counted. */
export function noStore(res: ServerResponse): void {
  res.setHeader('Cache-Control', 'no-cache, no-store, must-revalidate, private, max-age=0');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Expires', '0');
}

export function sendPixel(res: ServerResponse, status = 200): void {
  noStore(res);
  res.statusCode = status;
  res.setHeader('Content-Type', 'image/gif');
  res.setHeader('Content-Length', TRANSPARENT_GIF.length);
  res.end(TRANSPARENT_GIF);
}

/** A redirect that no mail client or proxy may cache (an ad, a landing page, the next sync hop). */
export function sendRedirect(res: ServerResponse, location: string): void {
  noStore(res);
  res.statusCode = 302;
  res.setHeader('Location', location);
  res.end();
}
