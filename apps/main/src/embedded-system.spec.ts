import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import { startEmbeddedSystem, type EmbeddedSystem } from './embedded-system';

type Line = Record<string, unknown>;

/**
 * `npm start`'s three apps in one process write to one logger: each line must name the app that
 * wrote it. Nest's `Logger` is one per process, so the reporting app's lines used to say
 * `"app":"auction"`, the app created last.
 */
describe('the embedded system: one log, three apps', () => {
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
  let system: EmbeddedSystem;
  let reporting: string;

  beforeAll(async () => {
    system = await startEmbeddedSystem(
      { DUCKDB_PATH: ':memory:', REPORTING_PORT: '0', INGEST_PORT: '0', AUCTION_PORT: '0' },
      createLogger('info', 'adx', sink),
    );
    reporting = `http://127.0.0.1:${listeningPort(system.reporting)}`;
  }, 60_000);
  afterAll(async () => {
    await system?.close();
  });

  const ofRequest = (id: string) => lines.filter((line) => line.reqId === id);

  it('starts each app under its own name', () => {
    const started = lines.filter((line) => line.msg === 'Nest application successfully started');
    expect(started.map((line) => line.app)).toEqual(['ingest', 'reporting', 'auction']);
    const mapped = lines.filter((line) => line.msg === 'Mapped {/api, POST} route');
    expect(mapped.map((line) => line.app)).toEqual(['reporting']);
  });

  it("writes a reporting request's line as the reporting app's, with its request id and result code", async () => {
    const seed = Math.floor(Date.now() / 1000);
    const hash = createHash('sha1').update(`demo-pub-token${seed}`).digest('hex');
    const res = await fetch(`${reporting}/api`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'report-1' },
      body: JSON.stringify({
        id: 'demo-pub',
        seed,
        hash,
        type: 'publisher',
        startDate: '-3 days',
        endDate: 'yesterday',
        splits: ['day'],
        columns: ['impressions'],
      }),
    });
    expect(res.headers.get('x-request-id')).toBe('report-1');
    const logged = ofRequest('report-1');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      app: 'reporting',
      msg: 'request completed',
      req: { method: 'POST', path: '/api' },
      res: { statusCode: 200, 'x-report-code': '201' },
    });
    expect(JSON.stringify(lines)).not.toMatch(new RegExp(`${hash}|demo-pub-token`));
  });

  it("writes the ingest's lines as the ingest's, even for events published elsewhere", async () => {
    await system.bus.publish('adx.impression', [{ key: 'k', value: 'not an event' }]);
    await system.bus.drain();
    const deadLetter = lines.find((line) => String(line.msg).includes('sent to adx.dead-letter'));
    expect(deadLetter).toMatchObject({ app: 'ingest', context: 'Ingest', level: 40 });
  });

  it("writes Nest's lines during a reporting request (a failing health check) as the reporting app's", async () => {
    await system.reportStore.close();
    const res = await fetch(`${reporting}/health`, { headers: { 'x-request-id': 'health-1' } });
    expect(res.status).toBe(503);
    const logged = ofRequest('health-1');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ app: 'reporting', level: 50 });
    expect(String(logged[0].msg)).toMatch(/Health Check has failed.*reportStore/s);
  });
});
