import { type Canvas, createCanvas } from '@napi-rs/canvas';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';

/**
 * A landscape picture like a native ad's main image (1.91:1): sky, sun, mountain, meadow. Drawn,
 * not shipped, so the tests carry no binary fixture.
 */
export function drawPhoto(width = 1200, height = 628): Canvas {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  const sky = context.createLinearGradient(0, 0, 0, height);
  sky.addColorStop(0, '#5aa9e6');
  sky.addColorStop(0.6, '#a7d8f0');
  sky.addColorStop(0.61, '#3d7a3a');
  sky.addColorStop(1, '#1f4d1e');
  context.fillStyle = sky;
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#f7d154';
  context.beginPath();
  context.arc(width * 0.75, height * 0.25, height * 0.12, 0, Math.PI * 2);
  context.fill();
  context.fillStyle = '#6b5b4b';
  context.beginPath();
  context.moveTo(width * 0.1, height * 0.6);
  context.lineTo(width * 0.35, height * 0.2);
  context.lineTo(width * 0.6, height * 0.6);
  context.fill();
  context.fillStyle = '#ffffff';
  context.beginPath();
  context.moveTo(width * 0.29, height * 0.28);
  context.lineTo(width * 0.35, height * 0.2);
  context.lineTo(width * 0.41, height * 0.28);
  context.fill();
  context.fillStyle = '#c0392b';
  context.fillRect(width * 0.46, height * 0.45, width * 0.08, height * 0.12);
  return canvas;
}

/** The smallest GIF: one white pixel (the classic 43-byte tracking pixel). */
export const PIXEL_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==',
  'base64',
);

export interface ImageServer {
  readonly origin: string;
  url(path: string): string;
  /** Requests received by path. */
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

type Route = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A loopback server with the answers an image host can give: images of each format, and each way
 * of failing (too big, too slow, not found, not an image, redirected, absurd dimensions, corrupt).
 */
export async function startImageServer(): Promise<ImageServer> {
  const photo = drawPhoto();
  const png = await photo.encode('png');
  const jpeg = await photo.encode('jpeg', 85);
  const webp = await photo.encode('webp', 80);
  const giant = await createCanvas(5000, 8).encode('png');
  const corrupt = Buffer.concat([png.subarray(0, 33), Buffer.alloc(4096, 0x5a)]);

  const send =
    (type: string, body: Buffer | string): Route =>
    (_request, response) => {
      response.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    };
  const routes: Record<string, Route> = {
    '/photo.png': send('image/png', png),
    '/photo.jpg': send('image/jpeg; charset=binary', jpeg),
    '/photo.webp': send('image/webp', webp),
    '/pixel.gif': send('image/gif', PIXEL_GIF),
    '/page.html': send('text/html; charset=utf-8', '<!doctype html><title>Not an image</title>'),
    '/lying.png': send('image/png', '<!doctype html><title>Not an image either</title>'),
    '/giant.png': send('image/png', giant),
    '/corrupt.png': send('image/png', corrupt),
    '/missing.png': (_request, response) => {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    },
    '/moved.png': (_request, response) => {
      response.writeHead(302, { location: '/photo.png' });
      response.end();
    },
    // 3 MiB in 64 KiB chunks, no Content-Length: only counting the bytes stops it.
    '/endless.png': (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' });
      const chunk = Buffer.alloc(64 * 1024, 0x42);
      png.copy(chunk, 0, 0, 33);
      let sent = 0;
      const pump = (): void => {
        while (sent < 48) {
          sent += 1;
          if (!response.write(chunk)) {
            return void response.once('drain', pump);
          }
        }
        response.end();
      };
      pump();
    },
    '/declared-huge.png': (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': 50 * 1024 * 1024 });
      response.write(png.subarray(0, 1024));
    },
    // Never answers: the timeout has to end it.
    '/hang.png': () => undefined,
    // Headers at once, then half the body, then nothing.
    '/stall.png': (_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length });
      response.write(png.subarray(0, png.length >> 1));
    },
  };

  const hits = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    // /ad/<anything>.png: a distinct URL per ad, the same picture.
    const route = routes[path] ?? (path.startsWith('/ad/') ? routes['/photo.jpg'] : undefined);
    if (route) {
      return route(request, response);
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
