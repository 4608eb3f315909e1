import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { reportRequests } from './metrics';
import { ObservabilityModule, type HealthChecks } from './observability.module';

describe('ObservabilityModule', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(checks: HealthChecks): Promise<string> {
    const moduleRef = await Test.createTestingModule({
      imports: [ObservabilityModule.forRoot(checks)],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    return `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  }

  it('answers /health with 200 and every check up, uncached', async () => {
    const base = await start({ reportStore: async () => {}, stateStore: async () => {} });
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(await res.json()).toMatchObject({
      status: 'ok',
      info: { reportStore: { status: 'up' }, stateStore: { status: 'up' } },
      error: {},
    });
  });

  it('answers /health with 503 naming the failing check and its reason', async () => {
    const base = await start({
      reportStore: () => Promise.reject(new Error('connection refused')),
      stateStore: async () => {},
    });
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: 'error',
      info: { stateStore: { status: 'up' } },
      error: { reportStore: { status: 'down', message: 'connection refused' } },
    });
  });

  it('serves Prometheus text on /metrics', async () => {
    reportRequests.inc({ code: '200' });
    const base = await start({});
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('# HELP adx_report_requests_total');
  });
});
