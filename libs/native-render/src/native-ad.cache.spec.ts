import { describe, expect, it } from 'vitest';
import {
  NativeAdCache,
  nativeAdCacheKey,
  type FlattenedNativeAd,
  type NativeRenderResult,
} from './native-ad.cache';

const AD: FlattenedNativeAd = {
  kind: 'flattened',
  title: 'Title',
  description: 'Description',
  sponsored: 'Brand',
  image: { url: 'https://cdn.example/main.jpg' },
  link: { url: 'https://brand.example/', clicktrackers: [] },
  imptrackers: [],
};

const png = (bytes: number): Buffer => Buffer.alloc(bytes, 1);
const rendered = (buffer: Buffer) => async (): Promise<NativeRenderResult> => ({ ok: true, png: buffer });

describe('nativeAdCacheKey', () => {
  const SIZE = { w: 300, h: 250 };

  it('is stable, URL-safe and names the DSP, creative and size', () => {
    const key = nativeAdCacheKey('dsp-1', 'crid/42?x', AD, SIZE);
    expect(key).toBe(nativeAdCacheKey('dsp-1', 'crid/42?x', { ...AD }, { ...SIZE }));
    expect(key).toMatch(/^dsp_1-crid_42_x-300x250-[A-Za-z0-9_-]{22}$/);
  });

  it('changes with anything that shows, and only with that', () => {
    const key = nativeAdCacheKey('dsp-1', 'c1', AD, SIZE);
    const variants = [
      nativeAdCacheKey('dsp-2', 'c1', AD, SIZE),
      nativeAdCacheKey('dsp-1', 'c2', AD, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', { ...AD, title: 'Other' }, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', { ...AD, description: 'Other' }, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', { ...AD, sponsored: 'Other' }, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', { ...AD, image: { url: 'https://cdn.example/b.jpg' } }, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', { ...AD, image: undefined }, SIZE),
      nativeAdCacheKey('dsp-1', 'c1', AD, { w: 250, h: 300 }),
    ];
    expect(new Set([key, ...variants]).size).toBe(variants.length + 1);
    // Slugs that collide still give different keys: the hash is over the raw values.
    expect(nativeAdCacheKey('a.b', 'c', AD, SIZE)).not.toBe(nativeAdCacheKey('a_b', 'c', AD, SIZE));
    const tracked = { ...AD, imptrackers: ['https://dsp.example/imp?auction=123'] };
    expect(nativeAdCacheKey('dsp-1', 'c1', tracked, SIZE)).toBe(key);
  });
});

describe('NativeAdCache', () => {
  it('gives back the very buffer it rendered', async () => {
    const cache = new NativeAdCache();
    const buffer = png(10);
    const result = await cache.getOrRender('k', rendered(buffer));
    expect(result).toEqual({ ok: true, png: buffer });
    expect(cache.get('k')).toBe(buffer);
    expect((await cache.getOrRender('k', rendered(png(1)))) as { png: Buffer }).toEqual({
      ok: true,
      png: buffer,
    });
  });

  it('shares a render in flight', async () => {
    const cache = new NativeAdCache();
    let renders = 0;
    let finish!: (result: NativeRenderResult) => void;
    const render = (): Promise<NativeRenderResult> => {
      renders += 1;
      return new Promise((resolve) => (finish = resolve));
    };
    const first = cache.getOrRender('k', render);
    const second = cache.getOrRender('k', render);
    expect(second).toBe(first);
    finish({ ok: true, png: png(5) });
    expect(await first).toEqual(await second);
    expect(renders).toBe(1);
  });

  it('forgets the least recently used entry beyond its entry count', async () => {
    const cache = new NativeAdCache({ maxEntries: 2 });
    cache.set('a', png(1));
    cache.set('b', png(1));
    cache.get('a');
    cache.set('c', png(1));
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map(Boolean)).toEqual([true, false, true]);
    expect(cache.size).toBe(2);
  });

  it('keeps within its byte budget', () => {
    const cache = new NativeAdCache({ maxBytes: 100 });
    cache.set('a', png(40));
    cache.set('b', png(40));
    cache.set('c', png(40));
    expect(cache.bytes).toBe(80);
    expect(cache.get('a')).toBeUndefined();
    cache.set('b', png(10));
    expect(cache.bytes).toBe(50);
    cache.set('huge', png(101));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.bytes).toBe(50);
  });

  it('remembers a failure for a while, then tries again', async () => {
    let now = 0;
    const cache = new NativeAdCache({ failureTtlMs: 1_000, now: () => now });
    let renders = 0;
    const failing = async (): Promise<NativeRenderResult> => {
      renders += 1;
      return { ok: false, reason: 'image_timeout' };
    };
    expect(await cache.getOrRender('k', failing)).toEqual({ ok: false, reason: 'image_timeout' });
    now = 999;
    expect(await cache.getOrRender('k', failing)).toEqual({ ok: false, reason: 'image_timeout' });
    expect(renders).toBe(1);
    now = 1_000;
    await cache.getOrRender('k', failing);
    expect(renders).toBe(2);
    expect(cache.get('k')).toBeUndefined();
  });

  it('does not remember failures when told not to', async () => {
    const cache = new NativeAdCache({ failureTtlMs: 0 });
    await cache.getOrRender('k', async () => ({ ok: false, reason: 'image_http_error' }));
    expect(await cache.getOrRender('k', rendered(png(3)))).toMatchObject({ ok: true });
  });

  it('turns a render that throws into a failure', async () => {
    const cache = new NativeAdCache();
    const result = await cache.getOrRender('k', () => Promise.reject(new Error('bug')));
    expect(result).toEqual({ ok: false, reason: 'native_render_error' });
  });
});
