import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@app/config';
import { trackerCalls } from '@app/observability';
import { DspUrlGuard } from '@app/url-guard';
import { AuctionConfig } from '../auction.config';
import { TrackerDispatcher, type TrackerKind } from './tracker.dispatcher';

async function count(kind: TrackerKind, result: string): Promise<number> {
  const metric = await trackerCalls.get();
  return metric.values.find((v) => v.labels.kind === kind && v.labels.result === result)?.value ?? 0;
}

describe('TrackerDispatcher: every notice and tracker through the DSP URL guard', () => {
  let server: Server;
  let base: string;
  const hits: string[] = [];
  const dispatchers: TrackerDispatcher[] = [];
  const dispatcher = (allowPrivate: boolean) => {
    const config = loadConfig(AuctionConfig, { TRACKER_TIMEOUT_MS: '1000' });
    const d = new TrackerDispatcher(config, new DspUrlGuard(allowPrivate));
    dispatchers.push(d);
    return d;
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.onApplicationShutdown()));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('never calls a notice URL inside our network: a literal is refused before, a name at connect', async () => {
    const d = dispatcher(false);
    const before = hits.length;
    const literal = await count('loss_notice', 'forbidden_address');
    d.fire('loss_notice', [`http://${base}/loss?l=102`, `http://localhost:${base.split(':')[1]}/loss?l=103`]);
    await d.settled();
    expect(hits.length).toBe(before);
    expect((await count('loss_notice', 'forbidden_address')) - literal).toBe(2);
  });

  it('counts a URL that is not plain http(s) as invalid, whatever the setting', async () => {
    const d = dispatcher(true);
    const before = await count('billing_notice', 'invalid_url');
    d.fire('billing_notice', ['javascript:alert(1)', 'gopher://127.0.0.1:6379/_', 'https://x/\n']);
    await d.settled();
    expect((await count('billing_notice', 'invalid_url')) - before).toBe(3);
  });

  it('calls loopback when the one setting allows private addresses', async () => {
    const d = dispatcher(true);
    const before = await count('billing_notice', 'ok');
    d.fire('billing_notice', [`http://${base}/bill?p=1.3`]);
    await d.settled();
    expect(hits).toContain('/bill?p=1.3');
    expect((await count('billing_notice', 'ok')) - before).toBe(1);
  });
});
