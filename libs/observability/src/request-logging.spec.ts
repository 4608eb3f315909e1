import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger';
import { httpLoggerOptions, requestIdOf } from './request-logging';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function exchange(requestId?: string | string[]) {
  const headers: Record<string, string> = {};
  const req = {
    headers: requestId === undefined ? {} : { 'x-request-id': requestId },
  } as unknown as IncomingMessage;
  const res = {
    setHeader: (name: string, value: string) => {
      headers[name.toLowerCase()] = value;
    },
  } as unknown as ServerResponse;
  return { id: requestIdOf(req, res), header: headers['x-request-id'] };
}

describe('requestIdOf', () => {
  it.each([
    ['a UUID', '0b6f8d4e-96c0-4b39-8a47-3b7f2a4c1e55'],
    ['one character', 'x'],
    ['128 visible characters', '!'.repeat(64) + '~'.repeat(64)],
    ['punctuation', 'trace=abc;span=1/2:"x"'],
  ])('keeps an incoming id of %s and echoes it', (_name, incoming) => {
    expect(exchange(incoming)).toEqual({ id: incoming, header: incoming });
  });

  it.each([
    ['none', undefined],
    ['an empty one', ''],
    ['129 characters', 'a'.repeat(129)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a non-ASCII character', 'café'],
    ['a control character', 'a\u0001b'],
    ['a header sent twice', ['a', 'b']],
  ])('makes a UUID when the incoming id is %s', (_name, incoming) => {
    const { id, header } = exchange(incoming);
    expect(id).toMatch(UUID);
    expect(header).toBe(id);
  });

  it('makes a new id for every request', () => {
    expect(exchange().id).not.toBe(exchange().id);
  });
});

describe('httpLoggerOptions', () => {
  const options = httpLoggerOptions(createLogger('silent', 'test'));
  const serializers = options.serializers as Record<string, (value: unknown) => Record<string, unknown>>;

  it('logs a request without its query string, credentials or body', () => {
    const logged = serializers.req({
      method: 'POST',
      url: '/api?hash=abc&token=secret',
      remoteAddress: '127.0.0.1',
      headers: {
        authorization: 'Bearer secret',
        cookie: 'session=secret',
        'content-type': 'application/json',
        accept: 'text/html',
        'user-agent': 'x'.repeat(1000),
      },
    });
    expect(logged).toMatchObject({
      method: 'POST',
      path: '/api',
      contentType: 'application/json',
      accept: 'text/html',
    });
    expect(JSON.stringify(logged)).not.toMatch(/secret|abc/);
    expect(String(logged.userAgent).length).toBeLessThanOrEqual(257);
  });

  it("logs a response's status and result code", () => {
    const logged = serializers.res({
      statusCode: 403,
      headers: { 'x-report-code': '903', 'content-type': 'application/json', 'set-cookie': 'secret' },
    });
    expect(logged).toEqual({ statusCode: 403, 'x-report-code': '903', 'content-type': 'application/json' });
  });

  it('logs failures at error, everything else at info, and leaves probes and scrapers out', () => {
    const level = options.customLogLevel!;
    const req = {} as IncomingMessage;
    expect(level(req, { statusCode: 200 } as ServerResponse, undefined)).toBe('info');
    expect(level(req, { statusCode: 403 } as ServerResponse, undefined)).toBe('info');
    expect(level(req, { statusCode: 503 } as ServerResponse, undefined)).toBe('error');
    expect(level(req, { statusCode: 200 } as ServerResponse, new Error('x'))).toBe('error');
    const ignore = (options.autoLogging as { ignore: (req: IncomingMessage) => boolean }).ignore;
    expect(ignore({ url: '/health' } as IncomingMessage)).toBe(true);
    expect(ignore({ url: '/metrics?x=1' } as IncomingMessage)).toBe(true);
    expect(ignore({ url: '/api' } as IncomingMessage)).toBe(false);
  });
});
