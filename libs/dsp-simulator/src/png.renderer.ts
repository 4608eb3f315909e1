import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';
import { createCanvas, GlobalFonts, type SKRSContext2D } from '@napi-rs/canvas';
import { hueOf, type BannerSize } from './creative.renderer';

/** Rendered images kept by each cache; past it the oldest goes, so that odd sizes cannot fill memory. */
export const IMAGE_CACHE_LIMIT = 64;
/** About the body answered for a native image beyond the largest side rendered: 20 MiB. */
export const HUGE_IMAGE_BYTES = 20 * 1024 * 1024;

const FONT_FAMILY = 'DSP Simulator Sans';
const FONT_FILE = 'typeface-roboto/files/roboto-latin-500.woff2';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ZEROS = Buffer.alloc(64 * 1024);
const HUGE_FILLERS = HUGE_IMAGE_BYTES / ZEROS.length;

let fonts: string | undefined;

/**
 * Rendered PNGs by key, as promises so that concurrent requests for one size render it once. A
 * failed rendering is forgotten, to be tried again.
 */
export class PngCache {
  private readonly images = new Map<string, Promise<Buffer>>();

  get(key: string, render: () => Promise<Buffer>): Promise<Buffer> {
    const cached = this.images.get(key);
    if (cached) {
      return cached;
    }
    if (this.images.size >= IMAGE_CACHE_LIMIT) {
      this.images.delete(this.images.keys().next().value!);
    }
    let rendering: Promise<Buffer>;
    try {
      rendering = render();
    } catch (error) {
      // Drawing is synchronous: a failure there must not escape into the request handler.
      rendering = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    this.images.set(key, rendering);
    rendering.catch(() => this.images.delete(key));
    return rendering;
  }

  get size(): number {
    return this.images.size;
  }
}

/** The banner creative as a PNG: the colours and labels of the SVG one. */
export function renderCreativePng(size: BannerSize, seat: string, advertiser: string): Promise<Buffer> {
  const { w, h } = size;
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = `hsl(${hueOf(seat)},55%,40%)`;
  ctx.fillRect(0, 0, w, h);
  const font = Math.max(6, Math.round(Math.min(h / 5, (w * 0.9) / (0.6 * Math.max(advertiser.length, 1)))));
  label(ctx, advertiser, w / 2, h * 0.42, font);
  label(ctx, `${seat} ${w}x${h}`, w / 2, h * 0.7, Math.max(5, Math.round(font * 0.6)));
  // Encoded on the thread pool: the event loop keeps answering bid requests meanwhile.
  return canvas.encode('png');
}

/** A photo-like placeholder for the main image of a real native ad: sky, sun, hills. */
export function renderNativeImagePng(size: BannerSize, seat: string): Promise<Buffer> {
  const { w, h } = size;
  const hue = hueOf(seat);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  const sky = ctx.createLinearGradient(0, 0, 0, h);
  sky.addColorStop(0, 'hsl(205,70%,48%)');
  sky.addColorStop(1, 'hsl(195,65%,88%)');
  ctx.fillStyle = sky;
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = 'hsl(45,100%,70%)';
  ctx.beginPath();
  ctx.arc(w * 0.75, h * 0.3, Math.min(w, h) * 0.12, 0, Math.PI * 2);
  ctx.fill();
  // Greens and browns, shifted by seat so that two DSPs' images differ.
  hills(ctx, w, h, 0.55, `hsl(${90 + (hue % 60)},30%,45%)`, 3);
  hills(ctx, w, h, 0.72, `hsl(${20 + (hue % 30)},40%,30%)`, 5);
  label(ctx, `${w}x${h}`, w / 2, h * 0.9, Math.max(5, Math.round(Math.min(h / 12, w / 12))));
  return canvas.encode('png');
}

/**
 * A PNG announcing `size` and a 20 MiB body of zeros, instead of rendering it: the image of the
 * `native_huge_image` fault, which an exchange must refuse to fetch or decode in full.
 */
export function writeHugePng(res: ServerResponse, size: BannerSize): void {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size.w, 0);
  ihdr.writeUInt32BE(size.h, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const idat = HUGE_FILLERS * ZEROS.length;
  const head = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), uint32(idat), Buffer.from('IDAT')]);
  const tail = Buffer.concat([uint32(hugeIdatCrc()), pngChunk('IEND', Buffer.alloc(0))]);
  res.writeHead(200, {
    'content-type': 'image/png',
    'cache-control': 'no-store',
    'content-length': head.length + idat + tail.length,
  });
  res.write(head);
  // The same buffer queued 320 times: the socket holds references, not 20 MiB of copies.
  for (let i = 0; i < HUGE_FILLERS; i += 1) {
    res.write(ZEROS);
  }
  res.end(tail);
}

function label(ctx: SKRSContext2D, text: string, x: number, y: number, px: number): void {
  ctx.fillStyle = '#fff';
  ctx.font = `${px}px ${fontFamilies()}`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(text, x, y, ctx.canvas.width * 0.95);
}

function hills(ctx: SKRSContext2D, w: number, h: number, level: number, colour: string, waves: number): void {
  ctx.fillStyle = colour;
  ctx.beginPath();
  ctx.moveTo(0, h);
  for (let i = 0; i <= 24; i += 1) {
    const x = (w * i) / 24;
    ctx.lineTo(x, h * (level + 0.06 * Math.sin((i / 24) * Math.PI * waves)));
  }
  ctx.lineTo(w, h);
  ctx.closePath();
  ctx.fill();
}

/** Roboto from its package, registered once; the system's sans-serif when it cannot be. */
function fontFamilies(): string {
  if (fonts === undefined) {
    let registered = false;
    try {
      registered = GlobalFonts.registerFromPath(require.resolve(FONT_FILE), FONT_FAMILY) !== null;
    } catch {
      registered = false;
    }
    fonts = registered ? `"${FONT_FAMILY}", sans-serif` : 'sans-serif';
  }
  return fonts;
}

let idatCrc: number | undefined;

/** The CRC of the huge IDAT chunk, the same for every size: computed once, over 20 MiB. */
function hugeIdatCrc(): number {
  if (idatCrc === undefined) {
    let crc = crc32('IDAT');
    for (let i = 0; i < HUGE_FILLERS; i += 1) {
      crc = crc32(ZEROS, crc);
    }
    idatCrc = crc;
  }
  return idatCrc;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const name = Buffer.from(type, 'latin1');
  return Buffer.concat([uint32(data.length), name, data, uint32(crc32(data, crc32(name)))]);
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0, 0);
  return buffer;
}
