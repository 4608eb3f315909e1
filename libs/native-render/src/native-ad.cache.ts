import { createHash } from 'node:crypto';
import { type NativeAd } from '@app/openrtb';
import { type SlotSize } from './native-ad.layout';

export type FlattenedNativeAd = Extract<NativeAd, { kind: 'flattened' }>;

/** What the renderer gives: the slot-sized PNG, or why there is none. */
export type NativeRenderResult<Reason extends string = string> =
  { readonly ok: true; readonly png: Buffer } | { readonly ok: false; readonly reason: Reason };

export interface NativeAdCacheOptions {
  /** Default 5,000 PNGs. */
  readonly maxEntries?: number;
  /** Default 128 MiB: over a thousand flattened ads (PNG sizes in bench/journal/exchange.md, "Native ads"). */
  readonly maxBytes?: number;
  /**
   * How long a failed render is remembered, so that a creative whose image is down is rejected at
   * once rather than fetched again on every bid; 0 turns this off. Default 30 s.
   */
  readonly failureTtlMs?: number;
  /** Default 1,000 failures remembered. */
  readonly maxFailures?: number;
  readonly now?: () => number;
}

/**
 * A creative's key: the DSP, its creative id, and a hash of all that shows in the image (texts,
 * image URL, slot size). Two bids for the same creative share one render; a creative whose texts
 * change under the same crid gets a new key. Click and impression trackers are left out: they vary
 * per impression after macro substitution and do not show. URL-safe, for `/native/:key.png`.
 */
export function nativeAdCacheKey(dspId: string, crid: string, ad: FlattenedNativeAd, size: SlotSize): string {
  const content = JSON.stringify([
    dspId,
    crid,
    ad.title,
    ad.description,
    ad.sponsored,
    ad.image?.url ?? null,
    size.w,
    size.h,
  ]);
  const hash = createHash('sha256').update(content).digest('base64url').slice(0, 22);
  return `${slug(dspId)}-${slug(crid)}-${size.w}x${size.h}-${hash}`;
}

/** Readable in logs only: the hash is what tells keys apart. */
function slug(value: string): string {
  return value.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 24) || '_';
}

/**
 * Flattened PNGs by creative key, least recently used first out, bounded in entries and in bytes;
 * renders in flight are shared, so a burst of bids for a new creative fetches its image once.
 */
export class NativeAdCache {
  private readonly pngs = new Map<string, Buffer>();
  private readonly failures = new Map<string, { reason: string; until: number }>();
  private readonly inFlight = new Map<string, Promise<NativeRenderResult>>();
  private totalBytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly failureTtlMs: number;
  private readonly maxFailures: number;
  private readonly now: () => number;

  constructor(options: NativeAdCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 5_000;
    this.maxBytes = options.maxBytes ?? 128 * 1024 * 1024;
    this.failureTtlMs = options.failureTtlMs ?? 30_000;
    this.maxFailures = options.maxFailures ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.pngs.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** The PNG of a key, for serving `/native/:key.png`; refreshes its recency. */
  get(key: string): Buffer | undefined {
    const png = this.pngs.get(key);
    if (png !== undefined) {
      this.pngs.delete(key);
      this.pngs.set(key, png);
    }
    return png;
  }

  /**
   * The cached PNG, the remembered failure, the render already in flight for the key, or a new one
   * from `render`, which must not throw (a throw is remembered as `native_render_error`).
   */
  getOrRender<Reason extends string>(
    key: string,
    render: () => Promise<NativeRenderResult<Reason>>,
  ): Promise<NativeRenderResult<Reason>> {
    const png = this.get(key);
    if (png !== undefined) {
      return Promise.resolve({ ok: true, png });
    }
    const failed = this.failures.get(key);
    if (failed !== undefined) {
      if (failed.until > this.now()) {
        return Promise.resolve({ ok: false, reason: failed.reason as Reason });
      }
      this.failures.delete(key);
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) {
      return pending as Promise<NativeRenderResult<Reason>>;
    }

    const started = render()
      .catch((): NativeRenderResult<Reason> => ({ ok: false, reason: 'native_render_error' as Reason }))
      .then((result) => {
        this.inFlight.delete(key);
        if (result.ok) {
          this.set(key, result.png);
        } else {
          this.remember(key, result.reason);
        }
        return result;
      });
    this.inFlight.set(key, started);
    return started;
  }

  /** A PNG larger than the whole byte budget is served but not kept. */
  set(key: string, png: Buffer): void {
    this.delete(key);
    if (png.length > this.maxBytes) {
      return;
    }
    this.pngs.set(key, png);
    this.totalBytes += png.length;
    for (const [oldest, oldPng] of this.pngs) {
      if (this.pngs.size <= this.maxEntries && this.totalBytes <= this.maxBytes) {
        break;
      }
      this.pngs.delete(oldest);
      this.totalBytes -= oldPng.length;
    }
  }

  delete(key: string): void {
    const png = this.pngs.get(key);
    if (png === undefined) {
      return;
    }
    this.pngs.delete(key);
    this.totalBytes -= png.length;
  }

  private remember(key: string, reason: string): void {
    if (this.failureTtlMs <= 0) {
      return;
    }
    this.failures.delete(key);
    this.failures.set(key, { reason, until: this.now() + this.failureTtlMs });
    if (this.failures.size > this.maxFailures) {
      const oldest = this.failures.keys().next();
      if (!oldest.done) {
        this.failures.delete(oldest.value);
      }
    }
  }
}
