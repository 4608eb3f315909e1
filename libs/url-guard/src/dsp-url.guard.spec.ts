import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspUrlGuard, UrlRefusal } from './dsp-url.guard';

describe('DspUrlGuard.check', () => {
  const guard = new DspUrlGuard(false);
  const open = new DspUrlGuard(true);

  it.each([
    'https://dsp.example/win?p=1.5',
    'http://93.184.216.34/loss',
    'https://[2606:4700:4700::1111]/bill',
    'https://dsp.example:8443/x',
  ])('lets %s through', (url) => {
    expect(guard.check(url)).toMatchObject({ ok: true });
  });

  it.each([
    'http://127.0.0.1/win',
    'http://127.1/win',
    'http://2130706433/win',
    'http://0x7f.0.0.1/win',
    'http://%31%32%37.0.0.1/win',
    'http://10.0.0.5/admin',
    'http://169.254.169.254/latest/meta-data/',
    'http://192.168.1.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a00:5]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[fd00::1]/',
    'http://0.0.0.0:8080/',
  ])('refuses %s, an internal address', (url) => {
    expect(guard.check(url)).toMatchObject({ ok: false, reason: UrlRefusal.ForbiddenAddress });
    expect(open.check(url)).toMatchObject({ ok: true });
  });

  it.each([
    'ftp://dsp.example/x',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
    '//dsp.example/x',
    'https://user:pass@dsp.example/',
    'https://dsp.example/\n',
    'https://dsp .example/',
    `https://dsp.example/${'a'.repeat(3000)}`,
    '',
  ])('refuses %j as invalid, whatever the setting', (url) => {
    expect(guard.check(url)).toMatchObject({ ok: false, reason: UrlRefusal.InvalidUrl });
    expect(open.check(url)).toMatchObject({ ok: false, reason: UrlRefusal.InvalidUrl });
  });
});

describe('DspUrlGuard.connect', () => {
  let server: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      hits += 1;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (guard: DspUrlGuard, url: string) => {
    const agent = new Agent({ connect: { ...guard.connect } });
    try {
      const res = await request(url, { dispatcher: agent });
      await res.body.text();
      return 'called';
    } catch (error) {
      return DspUrlGuard.refusedConnection(error) ? 'refused' : `failed: ${(error as Error).message}`;
    } finally {
      await agent.close();
    }
  };

  it('refuses a name that resolves to loopback at connect time: the server is never called', async () => {
    const before = hits;
    const url = `http://localhost:${port}/win`;
    expect(new DspUrlGuard(false).check(url)).toMatchObject({ ok: true });
    expect(await call(new DspUrlGuard(false), url)).toBe('refused');
    expect(hits).toBe(before);
  });

  it('calls it when private addresses are allowed', async () => {
    const before = hits;
    expect(await call(new DspUrlGuard(true), `http://localhost:${port}/win`)).toBe('called');
    expect(hits).toBe(before + 1);
  });
});
