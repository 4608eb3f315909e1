import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { STACK, requireOrSkip, waitUntil } from '@app/testing';
import { writeTestCatalog } from '../e2e/reporting-system';
import { startAuctionWorkers, type AuctionWorkers } from '../support/auction-workers';

const SLOT = 'slot-1-1-2';

/** The pids whose parent is `pid`: the auction's workers. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'auction: AUCTION_WORKERS processes on one port, sharing their state through Redis',
  () => {
    let dsp: DspSimulator;
    let workers: AuctionWorkers;
    let auction: ChildProcess;
    let exited: Promise<number | null>;
    let url: string;
    let lines: string[] = [];

    /** One request per connection, so that the cluster spreads them over the workers. */
    const open = async (recipient: string) => {
      const res = await request(`${url}/img/${SLOT}?placement=drop-1&recipient=${recipient}`, {
        headers: { connection: 'close' },
      });
      await res.body.dump();
      return { status: res.statusCode, location: res.headers.location as string };
    };
    const counter = async (result: string) => {
      const text = await (await request(`${url}/metrics`, { headers: { connection: 'close' } })).body.text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`adx_ad_requests_total{endpoint="img",result="${result}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };

    beforeAll(async () => {
      dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 5, max: 5 } });
      const catalog = writeTestCatalog((doc) => {
        doc.dsps = [{ ...doc.dsps[0], endpoint: dsp.bidUrl, timeoutMs: 1000 }];
      });
      workers = await startAuctionWorkers({
        catalog,
        prefix: `test:workers:${process.pid}:${Date.now()}:`,
        env: { AUCTION_TMAX_MS: '1000' },
      });
      ({ process: auction, exited, url, lines } = workers);
    }, 120_000);

    afterAll(async () => {
      await workers?.stop();
      await dsp?.close();
    });

    it('runs two workers under one primary, each serving ad requests', () => {
      expect(childrenOf(auction.pid!)).toHaveLength(2);
      expect(lines.some((l) => l.includes('"starting workers"') && l.includes('"workers":2'))).toBe(true);
    });

    it('shows a reopen the same ad whichever worker serves it, and counts over all of them', async () => {
      const readers = Array.from({ length: 12 }, (_, i) => `worker-reader-${i}`);
      const first = await Promise.all(readers.map(open));
      expect(first.every((r) => r.status === 302)).toBe(true);
      const again = await Promise.all(readers.map(open));
      expect(again.map((r) => r.location)).toEqual(first.map((r) => r.location));
      expect(dsp.requests).toHaveLength(12);
      // Whichever worker answers the scrape, it reports what both served.
      for (let i = 0; i < 4; i += 1) {
        expect([await counter('unique'), await counter('reopen')]).toEqual([12, 12]);
      }
    });

    it('starts another worker when one dies, and keeps serving', async () => {
      const [victim] = childrenOf(auction.pid!);
      process.kill(victim, 'SIGKILL');
      await waitUntil(
        'a new worker',
        () => childrenOf(auction.pid!).length === 2 && !childrenOf(auction.pid!).includes(victim),
        { timeoutMs: 30_000 },
      );
      await waitUntil(
        'the new worker listening',
        () => lines.filter((l) => l.includes('"listening"')).length === 3,
        { timeoutMs: 30_000 },
      );
      expect(lines.some((l) => l.includes('auction worker died'))).toBe(true);
      expect((await open('after-restart-reader')).status).toBe(302);
    });

    it('closes every worker and exits 0 on SIGTERM', async () => {
      auction.kill('SIGTERM');
      expect(await exited).toBe(0);
    });
  },
);
