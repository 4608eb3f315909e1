import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import {
  drawNativeAd,
  type FlattenedNativeAd,
  NativeAdRenderer,
  nativeAdCacheKey,
  NativeImageFetcher,
  type SlotSize,
} from '@app/native-render';

/**
 * Flattening native ads into one PNG per slot: the first time (main image fetched from a loopback
 * server, decoded, drawn with the texts, PNG encoded) and from the cache, per slot size.
 * `npm run build && node dist/bench/native-flatten.bench.js [--ads 200] [--gets 200000]
 * [--sizes 300x250,600x200,728x90,320x50] [--concurrency 4] [--warmup 20] [--json FILE]`.
 *
 * Every ad has its own texts and image URL, so every first flatten fetches and renders. The image
 * is a 1200x628 JPEG (the 1.91:1 of most native main images) with noise over a drawn landscape, so
 * that it weighs and decodes like a photograph (~300 kB) rather than like flat colour. Latencies
 * are sequential, one ad at a time; the throughput column runs `--concurrency` flattens at once
 * (PNG encoding runs on libuv's thread pool, drawing on the main thread).
 */
const { values } = parseArgs({
  options: {
    ads: { type: 'string', default: '200' },
    gets: { type: 'string', default: '200000' },
    sizes: { type: 'string', default: '300x250,600x200,728x90,320x50' },
    concurrency: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '20' },
    json: { type: 'string' },
  },
});
const ADS = Number(values.ads);
const GETS = Number(values.gets);
const CONCURRENCY = Number(values.concurrency);
const WARMUP = Number(values.warmup);
const SIZES: SlotSize[] = values.sizes.split(',').map((size) => {
  const [w, h] = size.split('x').map(Number);
  return { w, h };
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** A landscape with noise: JPEG-compresses like a photograph. */
async function photoJpeg(): Promise<Buffer> {
  const canvas = createCanvas(1200, 628);
  const context = canvas.getContext('2d');
  const sky = context.createLinearGradient(0, 0, 0, 628);
  sky.addColorStop(0, '#5aa9e6');
  sky.addColorStop(0.6, '#a7d8f0');
  sky.addColorStop(0.61, '#3d7a3a');
  sky.addColorStop(1, '#1f4d1e');
  context.fillStyle = sky;
  context.fillRect(0, 0, 1200, 628);
  context.fillStyle = '#6b5b4b';
  context.beginPath();
  context.moveTo(120, 377);
  context.lineTo(420, 126);
  context.lineTo(720, 377);
  context.fill();
  const pixels = context.getImageData(0, 0, 1200, 628);
  let seed = 1;
  for (let i = 0; i < pixels.data.length; i += 4) {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    const noise = ((seed >>> 16) % 41) - 20;
    for (let c = 0; c < 3; c++) {
      pixels.data[i + c] = Math.max(0, Math.min(255, pixels.data[i + c] + noise));
    }
  }
  context.putImageData(pixels, 0, 0);
  return canvas.encode('jpeg', 85);
}

function ad(index: number, size: SlotSize, origin: string): FlattenedNativeAd {
  return {
    kind: 'flattened',
    title: `Hike the Dolomites this summer with expert local guides, trip ${index}`,
    description: `Seven days, small groups, mountain huts and the best views in the Alps. Offer ${index}: book by May 31.`,
    sponsored: `Alpine Trails ${index % 17}`,
    image: { url: `${origin}/ad/${size.w}x${size.h}/${index}.jpg` },
    link: { url: 'https://alpine.example/', clicktrackers: [] },
    imptrackers: [],
  };
}

async function main(): Promise<void> {
  const jpeg = await photoJpeg();
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': jpeg.length });
    response.end(jpeg);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fetcher = new NativeImageFetcher({ allowPrivateAddresses: true });
  const renderer = new NativeAdRenderer({ fetcher, cache: { maxEntries: 100_000, maxBytes: 2 ** 31 } });
  const photo = await loadImage(jpeg);

  // Fonts, JIT, the connection to the image server.
  for (let i = 0; i < WARMUP; i++) {
    const size = SIZES[i % SIZES.length];
    await renderer.render(ad(-1 - i, size, origin), size);
  }

  const rows: string[] = [];
  const results: Record<string, unknown>[] = [];
  for (const size of SIZES) {
    const label = `${size.w}x${size.h}`;
    const keys: string[] = [];
    const first: number[] = [];
    const fetches: number[] = [];
    const draws: number[] = [];
    const bytes: number[] = [];
    for (let i = 0; i < ADS; i++) {
      const creative = ad(i, size, origin);
      const key = nativeAdCacheKey('bench', `crid-${i}`, creative, size);
      const started = performance.now();
      const result = await renderer.flatten(key, creative, size);
      first.push(performance.now() - started);
      if (!result.ok) {
        throw new Error(`${label} ad ${i}: ${result.reason}`);
      }
      keys.push(key);
      bytes.push(result.png.length);
    }
    // The two halves of a first flatten, apart: fetch + decode, then layout + draw + encode.
    for (let i = 0; i < ADS; i++) {
      const creative = ad(ADS + i, size, origin);
      let started = performance.now();
      const fetched = await fetcher.fetch(creative.image!.url);
      fetches.push(performance.now() - started);
      if (!fetched.ok) {
        throw new Error(fetched.reason);
      }
      started = performance.now();
      await drawNativeAd(creative, size, photo);
      draws.push(performance.now() - started);
    }

    // Throughput: distinct ads, `CONCURRENCY` in flight.
    let next = 0;
    const startedAll = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < ADS) {
          const i = 2 * ADS + next++;
          const creative = ad(i, size, origin);
          const result = await renderer.flatten(
            nativeAdCacheKey('bench', `crid-${i}`, creative, size),
            creative,
            size,
          );
          if (!result.ok) {
            throw new Error(result.reason);
          }
        }
      }),
    );
    const perSecond = ADS / ((performance.now() - startedAll) / 1000);

    const gets: number[] = new Array<number>(GETS);
    let seed = 7;
    for (let i = 0; i < GETS; i++) {
      seed = (seed * 1_103_515_245 + 12_345) >>> 0;
      const key = keys[seed % keys.length];
      const started = process.hrtime.bigint();
      const png = renderer.get(key);
      gets[i] = Number(process.hrtime.bigint() - started) / 1000;
      if (png === undefined) {
        throw new Error(`cache miss for ${key}`);
      }
    }

    const f = summary(first);
    const g = summary(gets);
    const row = {
      size: label,
      firstP50Ms: f.p50,
      firstP99Ms: f.p99,
      fetchDecodeP50Ms: summary(fetches).p50,
      drawEncodeP50Ms: summary(draws).p50,
      pngP50Kb: summary(bytes).p50 / 1024,
      flattensPerSecond: perSecond,
      cachedGetP50Us: g.p50,
      cachedGetP99Us: g.p99,
    };
    results.push(row);
    rows.push(
      `| ${label} | ${row.firstP50Ms.toFixed(1)} ms | ${row.firstP99Ms.toFixed(1)} ms | ` +
        `${row.fetchDecodeP50Ms.toFixed(1)} ms | ${row.drawEncodeP50Ms.toFixed(1)} ms | ` +
        `${row.pngP50Kb.toFixed(0)} kB | ${row.flattensPerSecond.toFixed(0)}/s | ` +
        `${row.cachedGetP50Us.toFixed(2)} µs | ${row.cachedGetP99Us.toFixed(2)} µs |`,
    );
  }

  const cpu = /Model name:\s*(.+)/.exec(execFileSync('lscpu', { encoding: 'utf8' }))?.[1]?.trim();
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim();
  console.log(
    `\nNative flattening: ${ADS} distinct ads per size, ${(jpeg.length / 1024).toFixed(0)} kB 1200x628 JPEG ` +
      `main image over loopback; ${GETS} cached gets per size; throughput with ${CONCURRENCY} in flight.`,
  );
  console.log(`Machine: ${nproc} CPUs, ${cpu ?? 'unknown CPU'}, Node ${process.version}\n`);
  console.log(
    '| size | first flatten p50 | first flatten p99 | fetch + decode p50 | draw + encode p50 | PNG p50 | ' +
      `first flattens (${CONCURRENCY} in flight) | cached get p50 | cached get p99 |`,
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    console.log(row);
  }
  if (values.json) {
    writeFileSync(
      values.json,
      JSON.stringify({ machine: { nproc, cpu, node: process.version }, results }, null, 2),
    );
  }

  await renderer.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
