import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@app/observability';
import { listeningPort } from '@app/runtime';
import { startEmbeddedSystem, type EmbeddedSystem } from './embedded-system';

describe('scratch', () => {
  const lines: Record<string, unknown>[] = [];
  let system: EmbeddedSystem;
  beforeAll(async () => {
    const sink = new Writable({ write(chunk, _enc, done) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); done(); } });
    system = await startEmbeddedSystem({ DUCKDB_PATH: ':memory:', REPORTING_PORT: '0', INGEST_PORT: '0', AUCTION_PORT: '0' }, createLogger('debug', 'adx', sink));
  }, 60_000);
  afterAll(async () => { await system?.close(); });
  it('logs', async () => {
    const base = `http://127.0.0.1:${listeningPort(system.reporting)}`;
    const r = await fetch(`${base}/api`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'x-request-id': 'abc-123' } });
    console.log(r.status, [...r.headers]);
    const h = await fetch(`${base}/health`);
    console.log(h.status, await h.text(), [...h.headers]);
    const nf = await fetch(`${base}/nothing`);
    console.log(nf.status, [...nf.headers]);
    const a = await fetch(`http://127.0.0.1:${listeningPort(system.auction)}/health`);
    console.log(a.status, await a.text());
    await system.bus.publish('adx.impression', [{ key: 'k', value: 'not json' }]);
    await system.bus.drain();
    await new Promise((r) => setTimeout(r, 100));
    for (const l of lines) console.log(JSON.stringify(l).slice(0, 400));
  });
});
