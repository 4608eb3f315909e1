import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Response } from 'express';

export interface StaticAsset {
  /** Absolute path of the file. */
  readonly file: string;
  readonly contentType: string;
}

export const CONTENT_TYPES = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  png: 'image/png',
  svg: 'image/svg+xml',
} as const;

/** Headers of every page and file the reporting app serves to browsers. */
export function browserHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    'Content-Security-Policy': contentSecurityPolicy,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    // Not fingerprinted: the browser revalidates with the ETag Express computes.
    'Cache-Control': 'no-cache',
  };
}

/** A file of an installed package, resolved the way Node resolves it from this file. */
export function packageFile(request: string): string {
  return createRequire(__filename).resolve(request);
}

/**
 * A fixed list of files served from memory: read once on first use, never a path taken from the
 * request, so nothing outside the list can be reached.
 */
export class StaticAssets {
  private readonly cache = new Map<string, Buffer>();

  constructor(
    private readonly assets: Readonly<Record<string, StaticAsset>>,
    private readonly headers: Readonly<Record<string, string>>,
  ) {}

  has(name: string): boolean {
    return Object.hasOwn(this.assets, name);
  }

  /** Sends the named asset, or a plain 404 when the name is not on the list. */
  send(name: string, res: Response): void {
    if (!this.has(name)) {
      res.status(404).type('text/plain').send('Not found\n');
      return;
    }
    const asset = this.assets[name];
    let body = this.cache.get(name);
    if (body === undefined) {
      try {
        body = readFileSync(asset.file);
      } catch {
        res.status(404).type('text/plain').send('Not found\n');
        return;
      }
      this.cache.set(name, body);
    }
    res.status(200).set(this.headers).set('Content-Type', asset.contentType).send(body);
  }
}
