import { promisify } from 'node:util';
import { gzip, unzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';

const gzipAsync = promisify(gzip);

/** Output chunks of at least zlib's default and at most this: a trailer that lies allocates no more. */
const MIN_CHUNK = 16 * 1024;
const MAX_CHUNK = 32 * 1024 * 1024;

/**
 * A record batch inflated in one call into one buffer. A gzip stream ends with its length
 * (ISIZE, modulo 2^32), so the output buffer is sized once; zlib's default 16 KiB chunks cost a
 * thread-pool round trip each and a copy of them all at the end, 2.0-2.5 µs of CPU an event against
 * 0.4-0.5 (bench/journal/pipeline.md, "the ingest's own cost"). Synchronous: a batch is at most the
 * broker's `message.max.bytes` (1 MiB compressed by default), a few milliseconds of the event loop.
 * A trailer that lies (or a stream of several members) only changes the chunk size, not the result.
 */
export function inflateBatch(buffer: Buffer): Buffer {
  const length = buffer.length >= 18 ? buffer.readUInt32LE(buffer.length - 4) : 0;
  // One byte to spare: a buffer filled exactly makes zlib allocate another chunk to find the end.
  return unzipSync(buffer, { chunkSize: Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, length + 1)) });
}

/**
 * zlib's fastest level. On our events (JSON lines framed in records) it compresses less than zlib's default
 * level 6 for well under half the CPU, and the producer spent more time in gzip than in anything else. The
 * measurements are in bench/journal/pipeline.md ("four producers, fastest gzip"); the producer's rate against
 * its goal in BENCHMARKS.md.
 */
export const GZIP_LEVEL = 1;

/**
 * Makes kafkajs compress gzip batches at GZIP_LEVEL (its own codec takes zlib's default) and inflate
 * them with `inflateBatch`. The codec table is kafkajs's, one per process; decompression is gzip's
 * whatever the level.
 */
export function useFastGzip(): void {
  CompressionCodecs[CompressionTypes.GZIP] = () => ({
    compress: (encoder: { buffer: Buffer }) => gzipAsync(encoder.buffer, { level: GZIP_LEVEL }),
    // A turn of the event loop of its own for each batch: a fetch holds many, and inflated back to
    // back in microtasks they would hold the consumer's heartbeat timers for the whole fetch.
    decompress: (buffer: Buffer) =>
      new Promise<Buffer>((resolve, reject) =>
        setImmediate(() => {
          try {
            resolve(inflateBatch(buffer));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        }),
      ),
  });
}
