import { describe, expect, it } from 'vitest';
import { IMAGE_CACHE_LIMIT, PngCache } from './png.renderer';

describe('PngCache', () => {
  it('renders a key once, concurrent callers included', async () => {
    const cache = new PngCache();
    let renders = 0;
    const render = async () => {
      renders += 1;
      return Buffer.from('png');
    };
    const [a, b] = await Promise.all([cache.get('k', render), cache.get('k', render)]);

    expect(renders).toBe(1);
    expect(a).toBe(b);
  });

  it(`keeps at most ${IMAGE_CACHE_LIMIT} images, dropping the oldest`, async () => {
    const cache = new PngCache();
    let renders = 0;
    const render = async () => Buffer.from(String((renders += 1)));
    for (let i = 0; i <= IMAGE_CACHE_LIMIT; i += 1) {
      await cache.get(`k${i}`, render);
    }

    expect(cache.size).toBe(IMAGE_CACHE_LIMIT);
    await cache.get(`k${IMAGE_CACHE_LIMIT}`, render);
    expect(renders).toBe(IMAGE_CACHE_LIMIT + 1);
    await cache.get('k0', render);
    expect(renders).toBe(IMAGE_CACHE_LIMIT + 2);
  });

  it('forgets a failed rendering, thrown or rejected, so that the next call tries again', async () => {
    const cache = new PngCache();
    await expect(
      cache.get('k', () => {
        throw new Error('no canvas');
      }),
    ).rejects.toThrow('no canvas');
    await expect(cache.get('k', () => Promise.reject(new Error('no encoder')))).rejects.toThrow('no encoder');
    await expect(cache.get('k', async () => Buffer.from('png'))).resolves.toEqual(Buffer.from('png'));
  });
});
