import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { STACK, requireOrSkip, waitUntil, writeTestCatalog } from '@app/testing';
import { startAuctionWorkers, type AuctionWorkers } from '../support/auction-workers';
import {
  RELOADED_CREATIVE,
  catalogVersionOf,
  catalogWithWinner,
  replaceFile,
} from '../support/catalog-files';

const SLOT = 'slot-1-1-2';

/**
 * The auction as it runs in production, two workers under one primary (sharing their state
 * through Redis, as workers must), with CATALOG_WATCH=0 so that only the SIGHUP the primary relays
 * can reload: a valid new file serves the next auction in both workers, an invalid one is refused
 * by both, logged with its problems, and the last valid one keeps serving.
 */
describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'auction workers reload the catalog on SIGHUP',
  () => {
    const prefix = `test:reload:${process.pid}:${Date.now()}:`;
    let workers: AuctionWorkers;
    let auction: ChildProcess;
    let url: string;
    let file: string;
    let lines: string[];
    let reader = 0;

    /** A new reader on one connection of its own: a new auction, on whichever worker takes it. */
    const creatives = async (count: number) => {
      const out: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const res = await request(`${url}/img/${SLOT}?placement=drop-1&recipient=reload-reader-${reader++}`, {
          headers: { connection: 'close' },
        });
        await res.body.dump();
        out.push(String(res.headers.location).split('/creatives/')[1] ?? String(res.headers.location));
      }
      return out;
    };
    const series = async (name: string) => {
      const text = await (await request(`${url}/metrics`, { headers: { connection: 'close' } })).body.text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line ? Number(line.split(' ').pop()) : 0;
    };

    beforeAll(async () => {
      file = writeTestCatalog((doc) => {
        doc.dsps = [];
      });
      workers = await startAuctionWorkers({ catalog: file, prefix, env: { CATALOG_WATCH: '0' } });
      url = workers.url;
      lines = workers.lines;
      auction = workers.process;
    }, 120_000);

    afterAll(async () => {
      await workers?.stop();
    });

    it('serves the first catalog in both workers', async () => {
      const version = catalogVersionOf(readFileSync(file));
      expect(await series(`adx_catalog_info{version="${version}"}`)).toBe(2);
      expect(await creatives(6)).not.toContain(RELOADED_CREATIVE);
    });

    it('takes a valid new file in every worker for the next auction', async () => {
      const version = replaceFile(file, JSON.stringify(catalogWithWinner()));
      // Without the signal nothing changes: the file is not watched.
      expect(await creatives(4)).not.toContain(RELOADED_CREATIVE);
      process.kill(auction.pid!, 'SIGHUP');
      await waitUntil(
        'both workers reloaded',
        async () => (await series(`adx_catalog_info{version="${version}"}`)) === 2,
        { timeoutMs: 30_000 },
      );
      expect(await creatives(8)).toEqual(Array.from({ length: 8 }, () => `${RELOADED_CREATIVE}.svg`));
      expect(await series('adx_catalog_reloads_total{result="applied"}')).toBe(2);
      // The primary is still there, with its two workers.
      expect(auction.exitCode).toBeNull();
    });

    it('refuses an invalid file in every worker, logs its problems and keeps the last valid one', async () => {
      const valid = catalogVersionOf(readFileSync(file));
      const broken = catalogWithWinner();
      broken.strategies.find((s: { id: string }) => s.id === 'str-reloaded').campaignId = 'cmp-missing';
      replaceFile(file, JSON.stringify(broken));
      process.kill(auction.pid!, 'SIGHUP');
      await waitUntil(
        'both refused',
        async () => (await series('adx_catalog_reloads_total{result="refused"}')) === 2,
        { timeoutMs: 30_000 },
      );
      const refusals = lines.filter((l) => l.includes('catalog refused'));
      expect(refusals).toHaveLength(2);
      expect(refusals.every((l) => l.includes('strategy str-reloaded: unknown campaign'))).toBe(true);
      expect(await series(`adx_catalog_info{version="${valid}"}`)).toBe(2);
      expect(await creatives(6)).toEqual(Array.from({ length: 6 }, () => `${RELOADED_CREATIVE}.svg`));
    });
  },
);
