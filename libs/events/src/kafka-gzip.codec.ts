import { promisify } from 'node:util';
import { gzip, unzip } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';

const gzipAsync = promisify(gzip);
const unzipAsync = promisify(unzip);

/**
 * zlib's fastest level. On our events (JSON lines framed in records) it compresses less than zlib's default
 * level 6 for well under half the CPU, and the producer spent more time in gzip than in anything else. The
 * measurements are in bench/journal/pipeline.md ("four producers, fastest gzip"); the producer's rate against
 * its goal in BENCHMARKS.md.
 */
export const GZIP_LEVEL = 1;

/**
 * Makes kafkajs compress gzip batches at GZIP_LEVEL (its own codec takes zlib's default). The codec
 * table is kafkajs's, one per process; decompression is gzip's whatever the level.
 */
export function useFastGzip(): void {
  CompressionCodecs[CompressionTypes.GZIP] = () => ({
    compress: (encoder: { buffer: Buffer }) => gzipAsync(encoder.buffer, { level: GZIP_LEVEL }),
    decompress: (buffer: Buffer) => unzipAsync(buffer),
  });
}
