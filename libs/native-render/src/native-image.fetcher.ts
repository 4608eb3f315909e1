import { type Image, loadImage } from '@napi-rs/canvas';
import { Agent, request, type Dispatcher } from 'undici';
import { DspUrlGuard, UrlRefusal } from '@app/url-guard';
import { parseImageHeader, type ImageFormat } from './image-header.parser';

/** Why a native ad's image could not be used; the render fails with it and the bid is rejected. */
export const IMAGE_FETCH_FAILURES = [
  /** Not an absolute http(s) URL. */
  'image_bad_url',
  /** The host is, or resolves to, a private, loopback or link-local address. */
  'image_forbidden_address',
  /** DNS failure, connection refused or reset, TLS failure. */
  'image_unreachable',
  /** Headers and body took longer than the timeout, together. */
  'image_timeout',
  /** A 3xx: redirects are not followed (see `NativeImageFetcher`). */
  'image_redirected',
  /** Any other status than 200. */
  'image_http_error',
  /** Content-Length or the bytes read went past the size limit. */
  'image_too_large',
  /** The content type is not image/png, jpeg, gif or webp, or the bytes are none of these. */
  'image_not_an_image',
  /** The header declares more pixels a side than the limit. */
  'image_dimensions_too_large',
  /** The bytes look like an image but do not decode. */
  'image_undecodable',
] as const;

export type ImageFetchFailure = (typeof IMAGE_FETCH_FAILURES)[number];

export type ImageFetchResult =
  | { readonly ok: true; readonly image: Image; readonly format: ImageFormat; readonly bytes: number }
  | { readonly ok: false; readonly reason: ImageFetchFailure; readonly detail: string };

export interface NativeImageFetcherOptions {
  /** For the status line, headers and body together. Default 1,500 ms. */
  readonly timeoutMs?: number;
  /** Default 2 MiB: a 1200x627 main image is 100-300 kB as JPEG. */
  readonly maxBytes?: number;
  /** Largest width and height accepted, each. Default 4096 (a decoded 4096x4096 image is 64 MiB). */
  readonly maxDimension?: number;
  /**
   * The exchange's guard of the URLs DSPs give it (`@app/url-guard`): the image URL goes through
   * it like every notice and tracker. Without one, a guard of its own that lets private addresses
   * through only with `allowPrivateAddresses`.
   */
  readonly guard?: DspUrlGuard;
  /**
   * Let URLs reach private and loopback addresses, when no `guard` is given. Off in production;
   * tests and benchmarks serve their images from 127.0.0.1.
   */
  readonly allowPrivateAddresses?: boolean;
  /** Defaults to an agent of its own, keeping connections to image hosts alive between fetches. */
  readonly dispatcher?: Dispatcher;
}

const ACCEPTED_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Fetches a native ad's main image, server to server, within bounds a DSP cannot push: time,
 * bytes, pixels, formats and addresses. Every failure is a value with its reason, never a throw.
 *
 * Redirects are not followed: the URL that was validated with the bid is the one fetched. A
 * redirect would lead to a host nobody checked (the address guard would still apply, but not any
 * host or scheme rule of the validator), and every hop spends the same 1.5 s budget. An ad server
 * that needs a redirect for its image gets `image_redirected` in the bid's rejection reason and can
 * name the final URL instead.
 */
export class NativeImageFetcher {
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly maxDimension: number;
  private readonly guard: DspUrlGuard;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;

  constructor(options: NativeImageFetcherOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1_500;
    this.maxBytes = options.maxBytes ?? 2 * 1024 * 1024;
    this.maxDimension = options.maxDimension ?? 4096;
    this.guard = options.guard ?? new DspUrlGuard(options.allowPrivateAddresses ?? false);
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        connect: { timeout: this.timeoutMs, ...this.guard.connect },
        keepAliveTimeout: 30_000,
      });
  }

  async fetch(url: string): Promise<ImageFetchResult> {
    const verdict = this.guard.check(url);
    if (!verdict.ok) {
      const reason = verdict.reason === UrlRefusal.InvalidUrl ? 'image_bad_url' : 'image_forbidden_address';
      return failure(reason, verdict.detail);
    }
    const downloaded = await this.downloadWithin(verdict.target);
    return 'body' in downloaded ? this.decode(downloaded.body) : downloaded;
  }

  /** The download, bounded in time from the connection to the last byte of the body. */
  private async downloadWithin(target: URL): Promise<{ body: Buffer } | ImageFetchResult> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      return await this.download(target, controller.signal);
    } catch (error) {
      if (timedOut) {
        return failure('image_timeout', `no complete answer within ${this.timeoutMs} ms`);
      }
      const code = (error as { code?: unknown }).code;
      if (DspUrlGuard.refusedConnection(error)) {
        return failure('image_forbidden_address', describe(error));
      }
      if (
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT' ||
        code === 'UND_ERR_CONNECT_TIMEOUT'
      ) {
        return failure('image_timeout', describe(error));
      }
      return failure('image_unreachable', describe(error));
    } finally {
      clearTimeout(timer);
    }
  }

  /** The body, or the failure; throws only what the caller maps (network errors, the abort). */
  private async download(target: URL, signal: AbortSignal): Promise<{ body: Buffer } | ImageFetchResult> {
    const response = await request(target, {
      method: 'GET',
      dispatcher: this.dispatcher,
      signal,
      headers: { accept: [...ACCEPTED_TYPES].join(', ') },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const { statusCode, headers, body } = response;
    const refuse = (reason: ImageFetchFailure, detail: string): ImageFetchResult => {
      // Destroying rather than draining: the rest of a refused body is not worth a byte of it.
      // Undici's body then errors with an AbortError nobody else is listening for.
      body.once('error', () => undefined).destroy();
      return failure(reason, detail);
    };
    if (statusCode >= 300 && statusCode < 400) {
      return refuse(
        'image_redirected',
        `HTTP ${statusCode} to ${header(headers.location) || '(no location)'}`,
      );
    }
    if (statusCode !== 200) {
      return refuse('image_http_error', `HTTP ${statusCode}`);
    }

    const contentType = header(headers['content-type']).split(';')[0].trim().toLowerCase();
    if (!ACCEPTED_TYPES.has(contentType)) {
      return refuse('image_not_an_image', `content type ${contentType || '(none)'}`);
    }
    const declared = Number(header(headers['content-length']));
    if (Number.isFinite(declared) && declared > this.maxBytes) {
      return refuse('image_too_large', `Content-Length ${declared} over ${this.maxBytes} bytes`);
    }

    const chunks: Buffer[] = [];
    let received = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (received > this.maxBytes) {
        return refuse('image_too_large', `body over ${this.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return { body: Buffer.concat(chunks, received) };
  }

  private async decode(body: Buffer): Promise<ImageFetchResult> {
    const header = parseImageHeader(body);
    if (!header) {
      return failure('image_not_an_image', 'the bytes are not a PNG, JPEG, GIF or WebP image');
    }
    if (header.width > this.maxDimension || header.height > this.maxDimension) {
      return failure(
        'image_dimensions_too_large',
        `${header.width}x${header.height} over ${this.maxDimension}x${this.maxDimension}`,
      );
    }
    try {
      const image = await loadImage(body);
      if (image.width <= 0 || image.height <= 0) {
        return failure('image_undecodable', 'decodes to no pixels');
      }
      if (image.width > this.maxDimension || image.height > this.maxDimension) {
        return failure('image_dimensions_too_large', `decodes to ${image.width}x${image.height}`);
      }
      return { ok: true, image, format: header.format, bytes: body.length };
    } catch (error) {
      return failure('image_undecodable', describe(error));
    }
  }

  /** Closes the kept-alive connections of its own agent; a dispatcher it was given is left open. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) {
      await this.dispatcher.close();
    }
  }
}

function failure(reason: ImageFetchFailure, detail: string): ImageFetchResult {
  return { ok: false, reason, detail };
}

function header(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) {
    return String(error);
  }
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}
