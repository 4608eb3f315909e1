import { gunzipSync, gzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { inflateBatch, useFastGzip } from './kafka-gzip.codec';

/** The gzip header's XFL byte: 4 when the fastest level wrote the stream, 0 for zlib's default. */
const xfl = (stream: Buffer) => stream[8];

describe('useFastGzip', () => {
  const payload = Buffer.from(
    Array.from({ length: 300 }, (_, i) => JSON.stringify({ event_id: `e-${i}`, type: 'impression' })).join(
      '\n',
    ),
  );

  /** kafkajs's gzip codec once useFastGzip() has run. */
  const gzipCodec = () => {
    useFastGzip();
    return CompressionCodecs[CompressionTypes.GZIP]() as {
      compress: (encoder: { buffer: Buffer }) => Promise<Buffer>;
      decompress: (buffer: Buffer) => Promise<Buffer>;
    };
  };

  it("replaces kafkajs's gzip codec with one at zlib's fastest level", async () => {
    const codec = gzipCodec();
    const compressed = await codec.compress({ buffer: payload });
    expect(xfl(compressed)).toBe(4);
    expect(xfl(gzipSync(payload))).toBe(0);
    expect(gunzipSync(compressed).equals(payload)).toBe(true);
  });

  it('reads gzip written at any level', async () => {
    const codec = gzipCodec();
    for (const level of [1, 6, 9]) {
      expect((await codec.decompress(gzipSync(payload, { level }))).equals(payload)).toBe(true);
    }
  });
});

describe('inflateBatch', () => {
  const payload = Buffer.from('{"event_id":"e-1"}\n'.repeat(5000));

  it('inflates a batch whatever its trailer says its length is', () => {
    const compressed = gzipSync(payload, { level: 1 });
    expect(inflateBatch(compressed).equals(payload)).toBe(true);
    for (const length of [0, 1, payload.length - 1, 0xffffffff]) {
      const lying = Buffer.from(compressed);
      lying.writeUInt32LE(length, lying.length - 4);
      // zlib checks the length itself once inflated: a wrong one is refused, not read wrong.
      expect(() => inflateBatch(lying)).toThrow();
    }
  });

  it('inflates a stream of several gzip members, and an empty one', () => {
    const two = Buffer.concat([gzipSync(payload.subarray(0, 100)), gzipSync(payload.subarray(100))]);
    expect(inflateBatch(two).equals(payload)).toBe(true);
    expect(inflateBatch(gzipSync(Buffer.alloc(0))).length).toBe(0);
  });
});
