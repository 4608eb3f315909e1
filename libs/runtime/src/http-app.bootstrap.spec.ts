import { Agent, get as httpGet } from 'node:http';
import { Writable } from 'node:stream';
import {
  Controller,
  Get,
  Injectable,
  Logger,
  Module,
  type INestApplication,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@app/observability';
import { listeningPort, startHttpApp } from './http-app.bootstrap';

type Line = Record<string, unknown>;

/** Logs through Nest's `Logger`, as the apps' services do. */
@Controller()
class PingController {
  private readonly logger = new Logger('Ping');

  @Get('ping')
  ping(): string {
    this.logger.log('pinged');
    return 'pong';
  }

  @Get('boom')
  boom(): never {
    throw new Error('kaboom');
  }
}

/** Starts background work at bootstrap, as the ingest's consumer does. */
@Injectable()
class Ticker implements OnApplicationBootstrap {
  private readonly logger = new Logger('Ticker');

  onApplicationBootstrap(): void {
    setTimeout(() => this.logger.warn('tick'), 50);
  }
}

@Module({ controllers: [PingController], providers: [Ticker] })
class PingModule {}

describe('startHttpApp: two apps in one process', () => {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) {
        if (text) {
          lines.push(JSON.parse(text) as Line);
        }
      }
      done();
    },
  });
  const logger = createLogger('info', 'process', sink);
  let one: INestApplication;
  let two: INestApplication;

  beforeAll(async () => {
    one = await startHttpApp(PingModule, { host: '127.0.0.1', port: 0, logger, name: 'one' });
    two = await startHttpApp(PingModule, { host: '127.0.0.1', port: 0, logger, name: 'two' });
    await new Promise((resolve) => setTimeout(resolve, 100));
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  const get = (app: INestApplication, path: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${listeningPort(app)}${path}`, { headers });
  const ofRequest = (id: string) => lines.filter((line) => line.reqId === id);

  it('names the app on every line, Nest start-up and background work included', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.app === undefined)).toEqual([]);
    const ticks = lines.filter((line) => line.msg === 'tick');
    expect(ticks.map((line) => line.app).sort()).toEqual(['one', 'two']);
  });

  it("writes the lines of the first app's request as that app's, not the last app created", async () => {
    expect(await (await get(one, '/ping', { 'x-request-id': 'req-one' })).text()).toBe('pong');
    expect(await (await get(two, '/ping', { 'x-request-id': 'req-two' })).text()).toBe('pong');
    expect(ofRequest('req-one').map((line) => [line.app, line.context ?? null, line.msg])).toEqual([
      ['one', 'Ping', 'pinged'],
      ['one', null, 'request completed'],
    ]);
    expect(ofRequest('req-two').every((line) => line.app === 'two')).toBe(true);
  });

  it('echoes a valid X-Request-Id and makes one otherwise, the same as in the log', async () => {
    const kept = await get(one, '/ping', { 'x-request-id': 'trace-42' });
    expect(kept.headers.get('x-request-id')).toBe('trace-42');
    const made = await get(one, '/ping', { 'x-request-id': 'x'.repeat(129) });
    const id = made.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ofRequest(id).map((line) => line.msg)).toEqual(['pinged', 'request completed']);
    const missing = await get(two, '/nothing-here');
    expect(missing.status).toBe(404);
    expect(ofRequest(missing.headers.get('x-request-id')!)).toHaveLength(1);
  });

  it('logs a request that failed at error, with its id and app', async () => {
    const res = await get(two, '/boom', { 'x-request-id': 'req-boom' });
    expect(res.status).toBe(500);
    const logged = ofRequest('req-boom');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((line) => line.app === 'two')).toBe(true);
    expect(logged.map((line) => [line.level, line.context ?? null, line.msg])).toEqual([
      [50, 'ExceptionsHandler', 'kaboom'],
      [50, null, 'request errored'],
    ]);
  });

  it('never logs credentials or query strings', async () => {
    await get(one, '/ping?hash=0123456789abcdef&token=s3cret', {
      authorization: 'Bearer s3cret',
      cookie: 'session=s3cret',
      'x-request-id': 'req-secret',
    });
    const text = JSON.stringify(ofRequest('req-secret'));
    expect(text).toContain('"path":"/ping"');
    expect(text).not.toMatch(/s3cret|0123456789abcdef/);
  });
});

describe('startHttpApp: idle connections', () => {
  const logger = createLogger('error', 'process', new Writable({ write: (_c, _e, done) => done() }));

  /** A GET on the agent's connections: its status, headers and the socket it went on. */
  const getOn = (agent: Agent, port: number) =>
    new Promise<{ keepAlive?: string; socket: unknown }>((resolve, reject) => {
      const req = httpGet({ host: '127.0.0.1', port, path: '/ping', agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ keepAlive: res.headers['keep-alive']?.toString(), socket: req.socket }),
        );
      });
      req.on('error', reject);
    });

  it('keeps an idle connection 65 s, past the idle timeout of common load balancers', async () => {
    const app = await startHttpApp(PingModule, { host: '127.0.0.1', port: 0, logger, name: 'idle' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await getOn(agent, listeningPort(app));
      // Node's default would answer timeout=5 and close the connection after 5 idle seconds.
      expect(first.keepAlive).toBe('timeout=65');
      const second = await getOn(agent, listeningPort(app));
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
      await app.close();
    }
  });

  it('closes at once with a client holding an idle connection open', async () => {
    const app = await startHttpApp(PingModule, { host: '127.0.0.1', port: 0, logger, name: 'closing' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await getOn(agent, listeningPort(app));
      const started = performance.now();
      await app.close();
      // An idle keep-alive connection must not hold the shutdown for its 65 s.
      expect(performance.now() - started).toBeLessThan(2000);
    } finally {
      agent.destroy();
    }
  });
});
