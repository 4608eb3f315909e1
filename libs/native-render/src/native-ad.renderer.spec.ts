import { createCanvas, loadImage, type Canvas, type Image } from '@napi-rs/canvas';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type NativeAd } from '@app/openrtb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawPhoto, startImageServer, type ImageServer } from './image-server.fixture';
import { type FlattenedNativeAd } from './native-ad.cache';
import { type Rect, type SlotSize } from './native-ad.layout';
import { drawNativeAd, NativeAdRenderer } from './native-ad.renderer';
import { NativeImageFetcher } from './native-image.fetcher';
import { nativeFont } from './native-fonts';

const SAMPLES = '/tmp/native-samples';

const SIZES: SlotSize[] = [
  { w: 300, h: 250 },
  { w: 600, h: 200 },
  { w: 728, h: 90 },
  { w: 320, h: 50 },
  { w: 300, h: 600 },
  { w: 160, h: 600 },
  { w: 970, h: 250 },
  { w: 468, h: 60 },
  { w: 336, h: 280 },
  { w: 250, h: 250 },
  { w: 320, h: 100 },
  { w: 120, h: 40 },
  { w: 120, h: 600 },
  { w: 2000, h: 40 },
  { w: 120, h: 2000 },
  { w: 2048, h: 2048 },
];

function ad(fields: Partial<FlattenedNativeAd> = {}): FlattenedNativeAd {
  return {
    kind: 'flattened',
    title: 'Hike the Dolomites this summer with expert local guides',
    description: 'Seven days, small groups, mountain huts and the best views in the Alps. Book by May 31.',
    sponsored: 'Alpine Trails',
    link: { url: 'https://alpine.example/', clicktrackers: [] },
    imptrackers: [],
    ...fields,
  };
}

const LONG = ad({
  title: 'An extraordinarily long title that goes on '.repeat(8),
  description: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor. '.repeat(20),
  sponsored: 'A Sponsor With An Unreasonably Long Company Name International Holdings '.repeat(3),
});
const UNBROKEN = ad({ title: 'W'.repeat(400), description: 'm'.repeat(2000), sponsored: 'X'.repeat(300) });
const UNICODE = ad({
  title: 'Crème brûlée à Paris 🍮 — 東京の夏 “déjà vu” שלום עולם',
  description: 'Ñandú, Straße, Ærø; 中文描述没有空格所以必须按字符换行才能放得下 مرحبا بالعالم 👩‍👩‍👧‍👦🇫🇷',
  sponsored: 'Café Déjà Vu 😀',
});
const RTL = ad({
  title: 'מבצע קיץ: טיול מודרך בהרי הדולומיטים',
  description: 'שבעה ימים, קבוצות קטנות ובקתות הרים. הזמינו עד סוף מאי.',
  sponsored: 'שבילי האלפים',
});

describe('NativeAdRenderer', () => {
  let server: ImageServer;
  let renderer: NativeAdRenderer;
  let photo: Image;

  beforeAll(async () => {
    server = await startImageServer();
    renderer = new NativeAdRenderer({
      fetcher: new NativeImageFetcher({ allowPrivateAddresses: true, timeoutMs: 300 }),
    });
    photo = await loadImage(
      await fetch(server.url('/photo.jpg')).then(async (r) => Buffer.from(await r.arrayBuffer())),
    );
    mkdirSync(SAMPLES, { recursive: true });
  });

  afterAll(async () => {
    await renderer.close();
    await server.close();
  });

  async function decoded(png: Buffer): Promise<Image> {
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    return loadImage(png);
  }

  it.each(SIZES)('flattens an ad into a $w x $h PNG', async (size) => {
    const result = await renderer.render(ad({ image: { url: server.url('/photo.png') } }), size);
    if (!result.ok) {
      throw new Error(result.reason);
    }
    const image = await decoded(result.png);
    expect([image.width, image.height]).toEqual([size.w, size.h]);
  });

  it.each(['/photo.jpg', '/photo.webp', '/pixel.gif'])('draws a main image fetched from %s', async (path) => {
    const result = await renderer.render(ad({ image: { url: server.url(path) } }), { w: 300, h: 250 });
    expect(result.ok).toBe(true);
  });

  it('draws an ad without image as text', async () => {
    const result = await renderer.render(ad(), { w: 300, h: 250 });
    if (!result.ok) {
      throw new Error(result.reason);
    }
    expect((await decoded(result.png)).width).toBe(300);
  });

  it.each([
    ['long', LONG],
    ['unbroken', UNBROKEN],
    ['unicode', UNICODE],
    ['right-to-left', RTL],
  ])('keeps %s texts inside their box at every size', { timeout: 30_000 }, async (_name, creative) => {
    const measuring = createCanvas(1, 1).getContext('2d');
    for (const withImage of [true, false]) {
      for (const size of SIZES.filter(({ w }) => w < 2048)) {
        const { png, layout, texts } = await drawNativeAd(creative, size, withImage ? photo : undefined);
        const image = await decoded(png);
        expect([image.width, image.height]).toEqual([size.w, size.h]);
        const boxes = [layout.text, ...(layout.image ? [layout.image] : [])];
        for (const box of boxes) {
          expect(box.x).toBeGreaterThanOrEqual(0);
          expect(box.y).toBeGreaterThanOrEqual(0);
          expect(box.x + box.w).toBeLessThanOrEqual(size.w);
          expect(box.y + box.h).toBeLessThanOrEqual(size.h);
        }
        expect(inkOutside(image, boxes), `${size.w}x${size.h}`).toBe(0);
        // The lines fit by measure, so the clip that guarantees the above cuts nothing off.
        const { title, description, label } = texts;
        expect(texts.height).toBeLessThanOrEqual(layout.text.h);
        for (const block of [title, description, label]) {
          measuring.font = nativeFont(block.weight, block.style.size);
          for (const line of block.lines) {
            expect(measuring.measureText(line).width, line).toBeLessThanOrEqual(layout.text.w);
          }
        }
        expect(title.lines.length).toBeGreaterThan(0);
        expect(label.lines[0]).toMatch(/^Sponsored/);
      }
    }
  });

  it('fails with the image fetch reason, since nothing unchecked is served', async () => {
    const size = { w: 300, h: 250 };
    const cases = [
      ['/missing.png', 'image_http_error'],
      ['/page.html', 'image_not_an_image'],
      ['/endless.png', 'image_too_large'],
      ['/hang.png', 'image_timeout'],
      ['/moved.png', 'image_redirected'],
    ];
    for (const [path, reason] of cases) {
      expect(await renderer.render(ad({ image: { url: server.url(path) } }), size)).toEqual({
        ok: false,
        reason,
      });
    }
  });

  it('refuses what it cannot flatten', async () => {
    const staticAd: NativeAd = {
      kind: 'static',
      image: { url: server.url('/photo.png') },
      link: { url: 'https://alpine.example/', clicktrackers: [] },
      imptrackers: [],
    };
    expect(await renderer.render(staticAd, { w: 300, h: 250 })).toEqual({
      ok: false,
      reason: 'native_not_flattened',
    });
    for (const size of [
      { w: 0, h: 0 },
      { w: 300.5, h: 250 },
      { w: 119, h: 250 },
      { w: 300, h: 39 },
      { w: 5000, h: 250 },
      { w: Number.NaN, h: 250 },
    ]) {
      expect(await renderer.render(ad(), size)).toEqual({ ok: false, reason: 'native_bad_size' });
    }
  });

  it('flattens a creative once for concurrent bids and serves the same buffer', async () => {
    const creative = ad({ image: { url: server.url('/ad/concurrent.png') } });
    const size = { w: 300, h: 250 };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => renderer.flatten('key-1', creative, size)),
    );
    expect(server.hits.get('/ad/concurrent.png')).toBe(1);
    const first = results[0];
    if (!first.ok) {
      throw new Error(first.reason);
    }
    for (const result of results) {
      expect(result).toEqual(first);
    }
    expect(renderer.get('key-1')).toBe(first.png);
    expect(await renderer.flatten('key-1', creative, size)).toEqual(first);
    expect(server.hits.get('/ad/concurrent.png')).toBe(1);
    expect(renderer.get('unknown')).toBeUndefined();
  });

  it('remembers a failed flatten for a while instead of fetching again', async () => {
    const creative = ad({ image: { url: server.url('/missing.png?remember') } });
    const before = server.hits.get('/missing.png') ?? 0;
    for (let i = 0; i < 3; i++) {
      expect(await renderer.flatten('key-2', creative, { w: 728, h: 90 })).toEqual({
        ok: false,
        reason: 'image_http_error',
      });
    }
    expect(server.hits.get('/missing.png')).toBe(before + 1);
    expect(renderer.get('key-2')).toBeUndefined();
  });

  it("saves samples to look at, each of its slot's size, the photo covering its box and the title inked where it belongs", async () => {
    const samples: [string, FlattenedNativeAd, SlotSize][] = [
      ['300x250', ad({ image: { url: server.url('/photo.jpg') } }), { w: 300, h: 250 }],
      ['600x200', ad({ image: { url: server.url('/photo.jpg') } }), { w: 600, h: 200 }],
      ['728x90', ad({ image: { url: server.url('/photo.jpg') } }), { w: 728, h: 90 }],
      ['320x50', ad({ image: { url: server.url('/photo.jpg') } }), { w: 320, h: 50 }],
      ['300x600', ad({ image: { url: server.url('/photo.jpg') } }), { w: 300, h: 600 }],
      ['300x250-long', { ...LONG, image: { url: server.url('/photo.jpg') } }, { w: 300, h: 250 }],
      ['300x250-unicode', { ...UNICODE, image: { url: server.url('/photo.jpg') } }, { w: 300, h: 250 }],
      ['600x200-rtl', { ...RTL, image: { url: server.url('/photo.jpg') } }, { w: 600, h: 200 }],
      ['728x90-text-only', ad(), { w: 728, h: 90 }],
    ];
    // The photo as the image server drew it, and the title's colour (native-ad.layout.ts).
    const source = drawPhoto();
    const TITLE = [0x11, 0x18, 0x27];
    for (const [name, creative, size] of samples) {
      const result = await renderer.render(creative, size);
      if (!result.ok) {
        throw new Error(`${name}: ${result.reason}`);
      }
      writeFileSync(`${SAMPLES}/${name}.png`, result.png);
      const image = await decoded(result.png);
      expect([image.width, image.height], name).toEqual([size.w, size.h]);
      const pixels = rgbaOf(image);
      // Where the renderer put the parts, to look at the pixels there.
      const { layout } = await drawNativeAd(creative, size, creative.image ? photo : undefined);
      if (creative.image) {
        // The photo scaled to cover its box, cropped evenly: compared with our own drawing of it.
        const box = layout.image!;
        expect(meanDifference(pixels, size.w, box, coverOf(source, box)), `${name} image`).toBeLessThan(12);
      } else {
        expect(layout.image, name).toBeUndefined();
      }
      // The title: pixels of its colour, in the text box only, starting at the box's reading edge.
      const ink = pixelsNear(pixels, size, TITLE, 24);
      expect(ink.length, `${name} title pixels`).toBeGreaterThan(30);
      const box = layout.text;
      expect(
        ink.filter(([x, y]) => x < box.x || x >= box.x + box.w || y < box.y || y >= box.y + box.h),
        `${name} title pixels outside the text box`,
      ).toEqual([]);
      // Nearer the reading edge of the box than the other: the right one for right-to-left.
      const xs = ink.map(([x]) => x);
      const [left, right] = [Math.min(...xs) - box.x, box.x + box.w - 1 - Math.max(...xs)];
      expect(
        name.endsWith('-rtl') ? right < left : left < right,
        `${name}: ${left} from the left, ${right} from the right`,
      ).toBe(true);
    }
  });
});

/** An image's RGBA bytes. */
function rgbaOf(image: Image): Uint8ClampedArray {
  const context = createCanvas(image.width, image.height).getContext('2d');
  context.drawImage(image, 0, 0);
  return context.getImageData(0, 0, image.width, image.height).data;
}

/** `photo` scaled to cover a box of `box`'s size and cropped evenly, as RGBA bytes. */
function coverOf(photo: Canvas, box: Rect): Uint8ClampedArray {
  const context = createCanvas(box.w, box.h).getContext('2d');
  const scale = Math.max(box.w / photo.width, box.h / photo.height);
  const [w, h] = [box.w / scale, box.h / scale];
  context.drawImage(photo, (photo.width - w) / 2, (photo.height - h) / 2, w, h, 0, 0, box.w, box.h);
  return context.getImageData(0, 0, box.w, box.h).data;
}

/** The mean difference per channel between the image's `box` and `expected`, 2 pixels in from its edges. */
function meanDifference(
  pixels: Uint8ClampedArray,
  width: number,
  box: Rect,
  expected: Uint8ClampedArray,
): number {
  let sum = 0;
  let count = 0;
  for (let y = 2; y < box.h - 2; y++) {
    for (let x = 2; x < box.w - 2; x++) {
      const at = ((box.y + y) * width + box.x + x) * 4;
      const want = (y * box.w + x) * 4;
      for (let c = 0; c < 3; c++) {
        sum += Math.abs(pixels[at + c] - expected[want + c]);
        count += 1;
      }
    }
  }
  return sum / count;
}

/** The [x, y] of the pixels within `tolerance` of `colour` on every channel. */
function pixelsNear(
  pixels: Uint8ClampedArray,
  size: SlotSize,
  colour: number[],
  tolerance: number,
): [number, number][] {
  const found: [number, number][] = [];
  for (let y = 0; y < size.h; y++) {
    for (let x = 0; x < size.w; x++) {
      const at = (y * size.w + x) * 4;
      if (colour.every((value, c) => Math.abs(pixels[at + c] - value) <= tolerance)) {
        found.push([x, y]);
      }
    }
  }
  return found;
}

/** Pixels that are not white outside the boxes, leaving out the 1-pixel border. */
function inkOutside(image: Image, boxes: Rect[]): number {
  const { width, height } = image;
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const { data } = context.getImageData(0, 0, width, height);
  const inside = new Uint8Array(width * height);
  for (const box of boxes) {
    for (let y = box.y; y < box.y + box.h; y++) {
      inside.fill(1, y * width + box.x, y * width + box.x + box.w);
    }
  }
  let ink = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const pixel = y * width + x;
      if (inside[pixel] === 1) {
        continue;
      }
      if (data[pixel * 4] !== 255 || data[pixel * 4 + 1] !== 255 || data[pixel * 4 + 2] !== 255) {
        ink += 1;
      }
    }
  }
  return ink;
}
