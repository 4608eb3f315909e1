import { createCanvas } from '@napi-rs/canvas';
import { describe, expect, it } from 'vitest';
import { PIXEL_GIF } from './image-server.fixture';
import { parseImageHeader } from './image-header.parser';

describe('parseImageHeader', () => {
  const canvas = createCanvas(321, 123);

  it.each([
    ['png', () => canvas.encode('png')],
    ['jpeg', () => canvas.encode('jpeg', 80)],
    ['webp', () => canvas.encode('webp', 80)],
    ['webp', () => canvas.encode('webp', 100)],
  ] as const)('reads the size of a %s', async (format, encode) => {
    expect(parseImageHeader(await encode())).toEqual({ format, width: 321, height: 123 });
  });

  it('reads the size of a gif', () => {
    expect(parseImageHeader(PIXEL_GIF)).toEqual({ format: 'gif', width: 1, height: 1 });
  });

  it('reads a size no decoder has been asked to allocate', async () => {
    const png = Buffer.from(await canvas.encode('png'));
    png.writeUInt32BE(60_000, 16);
    png.writeUInt32BE(60_000, 20);
    expect(parseImageHeader(png)).toEqual({ format: 'png', width: 60_000, height: 60_000 });
  });

  it.each([
    ['an empty body', Buffer.alloc(0)],
    ['HTML', Buffer.from('<!doctype html><html></html>')],
    ['a cut PNG signature', Buffer.from([0x89, 0x50, 0x4e, 0x47])],
    ['a JPEG without a frame', Buffer.from([0xff, 0xd8, 0xff, 0xd9])],
    ['a RIFF that is not WebP', Buffer.from('RIFF\0\0\0\0WAVEfmt ')],
  ])('knows %s is no image', (_name, bytes) => {
    expect(parseImageHeader(bytes)).toBeUndefined();
  });
});
