import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startImageServer, type ImageServer } from './image-server.fixture';
import { NativeImageFetcher, type ImageFetchFailure } from './native-image.fetcher';

describe('NativeImageFetcher', () => {
  let server: ImageServer;
  let fetcher: NativeImageFetcher;

  beforeAll(async () => {
    server = await startImageServer();
    fetcher = new NativeImageFetcher({ allowPrivateAddresses: true, timeoutMs: 300 });
  });

  afterAll(async () => {
    await fetcher.close();
    await server.close();
  });

  it.each([
    ['/photo.png', 'png', 1200, 628],
    ['/photo.jpg', 'jpeg', 1200, 628],
    ['/photo.webp', 'webp', 1200, 628],
    ['/pixel.gif', 'gif', 1, 1],
  ] as const)('fetches and decodes %s', async (path, format, width, height) => {
    const result = await fetcher.fetch(server.url(path));
    if (!result.ok) {
      throw new Error(`${result.reason}: ${result.detail}`);
    }
    expect(result.format).toBe(format);
    expect([result.image.width, result.image.height]).toEqual([width, height]);
  });

  it.each<[string, ImageFetchFailure]>([
    ['/missing.png', 'image_http_error'],
    ['/moved.png', 'image_redirected'],
    ['/page.html', 'image_not_an_image'],
    ['/lying.png', 'image_not_an_image'],
    ['/endless.png', 'image_too_large'],
    ['/declared-huge.png', 'image_too_large'],
    ['/giant.png', 'image_dimensions_too_large'],
    ['/corrupt.png', 'image_undecodable'],
    ['/hang.png', 'image_timeout'],
    ['/stall.png', 'image_timeout'],
  ])('fails %s with %s', async (path, reason) => {
    const result = await fetcher.fetch(server.url(path));
    expect(result).toMatchObject({ ok: false, reason });
    if (!result.ok) {
      expect(result.detail).not.toBe('');
    }
  });

  it('gives up on a server that never answers once its timeout has passed, not before', async () => {
    // The fetcher's clock is faked; the sockets are real, so the I/O turns while time stands still.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const asked = server.hits.get('/hang.png') ?? 0;
      let result: Awaited<ReturnType<NativeImageFetcher['fetch']>> | undefined;
      const fetching = fetcher.fetch(server.url('/hang.png')).then((r) => (result = r));
      await ioUntil(() => (server.hits.get('/hang.png') ?? 0) > asked);
      await vi.advanceTimersByTimeAsync(299);
      await turns(20);
      expect(result).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await ioUntil(() => result !== undefined);
      await fetching;
      expect(result).toMatchObject({ ok: false, reason: 'image_timeout' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops reading past the size limit', async () => {
    const small = new NativeImageFetcher({ allowPrivateAddresses: true, maxBytes: 10_000 });
    try {
      expect(await small.fetch(server.url('/photo.png'))).toMatchObject({
        ok: false,
        reason: 'image_too_large',
      });
      expect((await small.fetch(server.url('/pixel.gif'))).ok).toBe(true);
    } finally {
      await small.close();
    }
  });

  it.each([
    ['not a URL', 'image_bad_url'],
    ['/photo.png', 'image_bad_url'],
    ['ftp://example.com/photo.png', 'image_bad_url'],
    ['data:image/png;base64,iVBORw0KGgo=', 'image_bad_url'],
    ['file:///etc/passwd', 'image_bad_url'],
    ['http://user:secret@example.com/photo.png', 'image_bad_url'],
  ])('refuses %s', async (url, reason) => {
    expect(await fetcher.fetch(url)).toMatchObject({ ok: false, reason });
  });

  it('finds nothing listening', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await fetcher.fetch(`http://127.0.0.1:${port}/photo.png`)).toMatchObject({
      ok: false,
      reason: 'image_unreachable',
    });
  });

  describe('by default', () => {
    const guarded = new NativeImageFetcher();
    afterAll(() => guarded.close());

    it.each([
      ['loopback', () => server.url('/photo.png')],
      ['a name resolving to loopback', () => server.url('/photo.png').replace('127.0.0.1', 'localhost')],
      ['IPv6 loopback', () => 'http://[::1]/photo.png'],
      ['a cloud metadata service', () => 'http://169.254.169.254/latest/meta-data/'],
    ])('refuses %s', async (_name, url) => {
      const before = server.hits.get('/photo.png');
      expect(await guarded.fetch(url())).toMatchObject({ ok: false, reason: 'image_forbidden_address' });
      expect(server.hits.get('/photo.png')).toBe(before);
    });
  });
});

/** Lets the event loop turn `count` times: real I/O and setImmediate, neither of which is faked. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Lets the event loop turn until `done`, at most 2,000 times. */
async function ioUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !done(); i += 1) {
    await turns(1);
  }
  expect(done()).toBe(true);
}
