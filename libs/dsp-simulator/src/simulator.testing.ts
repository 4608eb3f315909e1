import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import type { DspSimulator } from './dsp-simulator';

/** Helpers of the simulator's specs: real HTTP on loopback, answers read whole. */

export function bidRequest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: 'auction-1', imp: [{ id: 'imp-1', banner: { w: 300, h: 250 } }], ...overrides };
}

/** Answers are inspected field by field, malformed ones included: JSON.parse's untyped result. */
export type Parsed = ReturnType<typeof JSON.parse>;

export type Headers = Record<string, string | string[] | undefined>;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: () => Parsed;
}

export async function post(target: DspSimulator | string, body: unknown): Promise<Answer> {
  const url = typeof target === 'string' ? target : target.bidUrl;
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-openrtb-version': '2.5' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: (): Parsed => JSON.parse(text) };
}

export async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** Reads an answer until it ends or the client gives up after `ms`, as an exchange's deadline would. */
export async function readFor(
  url: string,
  body: unknown,
  ms: number,
  method: 'GET' | 'POST' = 'POST',
): Promise<{ bytes: number; aborted: boolean }> {
  const signal = AbortSignal.timeout(ms);
  let bytes = 0;
  try {
    const res =
      method === 'POST'
        ? await request(url, { method, body: JSON.stringify(body), signal })
        : await request(url, { signal });
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
    }
    return { bytes, aborted: false };
  } catch (error) {
    if (signal.aborted) {
      return { bytes, aborted: true };
    }
    throw error;
  }
}

export async function timed<T>(action: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await action();
  return { result, ms: performance.now() - started };
}

/** Width and height from a PNG's IHDR chunk, which follows the 8-byte signature. */
export function pngSize(png: Buffer): { w: number; h: number } | undefined {
  const signature = png.subarray(0, 8).toString('latin1');
  if (signature !== '\x89PNG\r\n\x1a\n' || png.subarray(12, 16).toString('latin1') !== 'IHDR') {
    return undefined;
  }
  return { w: png.readUInt32BE(16), h: png.readUInt32BE(20) };
}
