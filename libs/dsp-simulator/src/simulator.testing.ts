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

/**
 * Reads an answer as it streams, counting its bytes; `stop()` hangs up. For specs on a fake clock:
 * the bytes come through real I/O while the clock stands still.
 */
export function streamed(
  url: string,
  body: unknown,
): { bytes: () => number; ended: Promise<'ended' | 'cut'>; status: Promise<number>; stop: () => void } {
  const controller = new AbortController();
  let bytes = 0;
  let status!: (code: number) => void;
  const statusCode = new Promise<number>((resolve) => (status = resolve));
  const ended = (async (): Promise<'ended' | 'cut'> => {
    try {
      const res = await request(url, {
        method: 'POST',
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      status(res.statusCode);
      for await (const chunk of res.body) {
        bytes += (chunk as Buffer).length;
      }
      return 'ended';
    } catch {
      return 'cut';
    }
  })();
  return { bytes: () => bytes, ended, status: statusCode, stop: () => controller.abort() };
}

/** Lets the event loop turn `count` times: real I/O and setImmediate, which fake clocks leave alone. */
export async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Lets the event loop turn until `done`, at most 5,000 times; fails the spec if it never is. */
export async function ioUntil(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 5_000 && !done(); i += 1) {
    await turns(1);
  }
  if (!done()) {
    throw new Error(`not done after 5,000 turns of the event loop: ${what}`);
  }
}

/** Width and height from a PNG's IHDR chunk, which follows the 8-byte signature. */
export function pngSize(png: Buffer): { w: number; h: number } | undefined {
  const signature = png.subarray(0, 8).toString('latin1');
  if (signature !== '\x89PNG\r\n\x1a\n' || png.subarray(12, 16).toString('latin1') !== 'IHDR') {
    return undefined;
  }
  return { w: png.readUInt32BE(16), h: png.readUInt32BE(20) };
}
