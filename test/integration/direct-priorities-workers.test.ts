import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { STACK, requireOrSkip } from '@app/testing';
import { startAuctionWorkers, type AuctionWorkers } from '../support/auction-workers';
import { ADVERTISER_OF, bookedCatalog, openAll, type CatalogDoc } from '../support/direct-priorities';

/**
 * The slots of one email requested at once land on two auction processes (AUCTION_WORKERS=2, one
 * request per connection) that share their delivery counters and open reservations through Redis:
 * a roadblock still fills every slot of an open or none, rivals of an exclusion group still never
 * meet in one open, a takeover still owns its template.
 */
describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'auction: roadblocks and exclusion across two processes sharing Redis',
  () => {
    let dsp: DspSimulator;
    let auction: AuctionWorkers;
    let url: string;
    let doc: CatalogDoc;

    /** The sum of a counter over its series whose labels include every one of `labels`. */
    const metric = async (name: string, labels: string[]) => {
      const text = await (await request(`${url}/metrics`, { headers: { connection: 'close' } })).body.text();
      return text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    };

    beforeAll(async () => {
      dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 20, max: 20 } });
      // The processes run on the real clock (UTC, pub-2 has no time zone): the takeover flies today.
      const catalog = bookedCatalog(dsp.bidUrl, new Date().toISOString().slice(0, 10));
      doc = JSON.parse(readFileSync(catalog, 'utf8')) as CatalogDoc;
      auction = await startAuctionWorkers({
        catalog,
        prefix: `test:priorities:${process.pid}:${Date.now()}:`,
        env: { AUCTION_TMAX_MS: '1000', DSP_URL_ALLOW_PRIVATE: '1' },
      });
      url = auction.url;
    }, 120_000);

    afterAll(async () => {
      await auction?.stop();
      await dsp?.close();
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
