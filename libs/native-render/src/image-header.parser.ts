/** The raster formats an email native ad's main image may come in (the IAB Native 1.1 image mimes). */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ImageHeader {
  readonly format: ImageFormat;
  readonly width: number;
  readonly height: number;
}

/**
 * The format and pixel size a body declares in its first bytes, before anything decodes it: a
 * 200-byte PNG can declare 60,000 x 60,000 pixels, and decoding it would take gigabytes. Undefined
 * when the bytes are none of the four formats or are cut short.
 */
export function parseImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (startsWith(data, PNG_SIGNATURE)) {
    return png(data);
  }
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) {
    return jpeg(data);
  }
  if (startsWith(data, GIF87A) || startsWith(data, GIF89A)) {
    return gif(data);
  }
  if (startsWith(data, RIFF) && data.length >= 12 && data.toString('latin1', 8, 12) === 'WEBP') {
    return webp(data);
  }
  return undefined;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const GIF87A = Buffer.from('GIF87a', 'latin1');
const GIF89A = Buffer.from('GIF89a', 'latin1');
const RIFF = Buffer.from('RIFF', 'latin1');

function startsWith(data: Buffer, prefix: Buffer): boolean {
  return data.length >= prefix.length && data.subarray(0, prefix.length).equals(prefix);
}

function sized(format: ImageFormat, width: number, height: number): ImageHeader | undefined {
  return width > 0 && height > 0 ? { format, width, height } : undefined;
}

/** IHDR is always the first chunk: width and height are big-endian at 16 and 20. */
function png(data: Buffer): ImageHeader | undefined {
  if (data.length < 24 || data.toString('latin1', 12, 16) !== 'IHDR') {
    return undefined;
  }
  return sized('png', data.readUInt32BE(16), data.readUInt32BE(20));
}

/** The logical screen size, little-endian at 6 and 8. */
function gif(data: Buffer): ImageHeader | undefined {
  if (data.length < 10) {
    return undefined;
  }
  return sized('gif', data.readUInt16LE(6), data.readUInt16LE(8));
}

/** Walks the marker segments up to the first start-of-frame, which holds the size. */
function jpeg(data: Buffer): ImageHeader | undefined {
  let offset = 2;
  while (offset + 4 <= data.length) {
    if (data[offset] !== 0xff) {
      return undefined;
    }
    const marker = data[offset + 1];
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    // Markers without a length: TEM, RST0-7, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      offset += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) {
      return undefined;
    } // end of image or scan before any frame
    const length = data.readUInt16BE(offset + 2);
    if (length < 2) {
      return undefined;
    }
    // SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (offset + 9 > data.length) {
        return undefined;
      }
      return sized('jpeg', data.readUInt16BE(offset + 7), data.readUInt16BE(offset + 5));
    }
    offset += 2 + length;
  }
  return undefined;
}

/** The first chunk tells the flavour: lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webp(data: Buffer): ImageHeader | undefined {
  if (data.length < 30) {
    return undefined;
  }
  const chunk = data.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    return sized('webp', data.readUInt16LE(26) & 0x3fff, data.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (data[20] !== 0x2f) {
      return undefined;
    }
    const bits = data.readUInt32LE(21);
    return sized('webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') {
    return sized('webp', data.readUIntLE(24, 3) + 1, data.readUIntLE(27, 3) + 1);
  }
  return undefined;
}
