import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { STACK, freePort, requireOrSkip } from '@app/testing';
import { ADVERTISER_OF, bookedCatalog, openAll, type CatalogDoc } from '../support/direct-priorities';

const ROOT = path.resolve(__dirname, '../..');
const MAIN = path.join(ROOT, 'dist/apps/auction/src/main.js');

/**
 * The slots of one email requested at once land on two auction processes (AUCTION_WORKERS=2, one
 * request per connection) that share their delivery counters and open reservations through Redis:
 * a roadblock still fills every slot of an open or none, rivals of an exclusion group still never
 * meet in one open, a takeover still owns its template.
 */
describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'auction: roadblocks and exclusion across two processes sharing Redis',
  () => {
    const prefix = `test:priorities:${process.pid}:${Date.now()}:`;
    let dsp: DspSimulator;
    let auction: ChildProcess;
    let url: string;
    let doc: CatalogDoc;
    const lines: string[] = [];

    /** The sum of a counter over its series whose labels include every one of `labels`. */
    const metric = async (name: string, labels: string[]) => {
      const text = await (await request(`${url}/metrics`, { headers: { connection: 'close' } })).body.text();
      return text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    };

    beforeAll(async () => {
      execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
      dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 20, max: 20 } });
      // The processes run on the real clock (UTC, pub-2 has no time zone): the takeover flies today.
      const catalog = bookedCatalog(dsp.bidUrl, new Date().toISOString().slice(0, 10));
      doc = JSON.parse(readFileSync(catalog, 'utf8')) as CatalogDoc;
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      auction = spawn(process.execPath, [MAIN], {
        env: {
          PATH: process.env.PATH,
          AUCTION_PORT: String(port),
          AUCTION_PUBLIC_URL: url,
          AUCTION_TMAX_MS: '1000',
          AUCTION_WORKERS: '2',
          // A loaded test machine's lag is not what this test is about.
          AUCTION_SHED_LAG_MS: '0',
          CATALOG_PATH: catalog,
          REDIS_URL: STACK.redisUrl,
          REDIS_KEY_PREFIX: prefix,
          DSP_URL_ALLOW_PRIVATE: '1',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const collect = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      auction.stdout!.on('data', collect);
      auction.stderr!.on('data', collect);
      const deadline = Date.now() + 60_000;
      while (lines.filter((l) => l.includes('"listening"')).length < 2) {
        if (Date.now() > deadline || auction.exitCode !== null) {
          throw new Error(`the auction workers did not start:\n${lines.join('\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }, 120_000);

    afterAll(async () => {
      auction?.kill('SIGKILL');
      await dsp?.close();
      const redis = new Redis(STACK.redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) {
        await redis.unlink(...keys);
      }
      redis.disconnect();
    });

    it('shows a roadblock in every slot of an open or in none', async () => {
      const slots = ['slot-1-1-1', 'slot-1-1-2', 'slot-1-1-3'];
      const opens = await openAll(url, doc, slots, 60, 'rb', (i) => (i % 2 === 1 ? '&kv=rival:1' : ''));
      const whole = opens.filter((shown) => shown.every((c) => c === 'cmp-6-1-2')).length;
      const none = opens.filter((shown) => shown.every((c) => c !== 'cmp-6-1-2')).length;
      expect(whole + none).toBe(opens.length);
      expect(whole).toBeGreaterThanOrEqual(30);
      expect(none).toBeGreaterThan(0);
      // The open's reservation was met by the other slots: some found it taken or held.
      expect(await metric('adx_booking_skips_total', ['reason="roadblocked"'])).toBeGreaterThan(0);
    });

    it('never shows two advertisers of one exclusion group in one open', async () => {
      const opens = await openAll(url, doc, ['slot-3-1-1', 'slot-3-1-2'], 60, 'ex');
      for (const shown of opens) {
        expect(new Set(shown.map((c) => ADVERTISER_OF[c]).filter(Boolean)).size).toBe(1);
      }
    });

    it('gives a takeover every slot of its template', async () => {
      const opens = await openAll(url, doc, ['slot-2-1-1', 'slot-2-1-2'], 20, 'to');
      expect(opens.flat().every((c) => c === 'cmp-5-1-1')).toBe(true);
    });
  },
);
