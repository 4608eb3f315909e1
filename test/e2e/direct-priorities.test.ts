import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { FIXED_NOW } from '@app/testing';
import { listeningPort } from '@app/runtime';
import {
  ADVERTISER_OF,
  bookedCatalog,
  campaignShown,
  openAll as openAllOn,
  openSlot,
  type CatalogDoc,
} from '../support/direct-priorities';
import { startReporting, type RunningReporting } from './reporting-system';

describe('exchange: roadblocks, takeovers, sponsorship and exclusion over HTTP', () => {
  let api: RunningReporting;
  let dsp: DspSimulator;
  let url: string;
  let doc: CatalogDoc;

  beforeAll(async () => {
    dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 20, max: 20 } });
    // The system runs on FIXED_NOW's clock: the takeover flies that day.
    const path = bookedCatalog(dsp.bidUrl, FIXED_NOW.toISOString().slice(0, 10));
    doc = JSON.parse(readFileSync(path, 'utf8')) as CatalogDoc;
    // A loaded test machine's event-loop lag is not what this test is about: no request is shed.
    api = await startReporting('embedded', {
      CATALOG_PATH: path,
      AUCTION_TMAX_MS: '1000',
      AUCTION_SHED_LAG_MS: '0',
    });
    url = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await dsp?.close();
  });

  const openAll = (slots: readonly string[], opens: number, tag: string, extra?: (i: number) => string) =>
    openAllOn(url, doc, slots, opens, tag, extra);

  it('shows a roadblock in every slot of an open or in none, its slots requested at once; a reopen keeps each slot', async () => {
    const slots = ['slot-1-1-1', 'slot-1-1-2', 'slot-1-1-3'];
    // Every other open has a rival on its 300x250 slots.
    const opens = await openAll(slots, 40, 'rb', (i) => (i % 2 === 1 ? '&kv=rival:1' : ''));
    const whole = opens.filter((shown) => shown.every((c) => c === 'cmp-6-1-2')).length;
    const none = opens.filter((shown) => shown.every((c) => c !== 'cmp-6-1-2')).length;
    expect(whole + none).toBe(opens.length);
    expect(whole).toBeGreaterThanOrEqual(20);
    expect(none).toBeGreaterThan(0);
    // A reopen of a roadblocked email and of a rival's shows what each slot showed.
    const rival = opens.findIndex((shown) => shown.every((c) => c !== 'cmp-6-1-2'));
    for (const i of [0, rival]) {
      const again = await Promise.all(
        slots.map(async (slot) =>
          campaignShown(doc, await openSlot(url, slot, `rb-reader-${i}`, 'rb-drop', '&kv=rival:1')),
        ),
      );
      expect(again).toEqual(opens[i]);
    }
    // A click on each slot of the roadblocked email (open 0, no rival) goes to the roadblock's landing page.
    expect(opens[0]).toEqual(['cmp-6-1-2', 'cmp-6-1-2', 'cmp-6-1-2']);
    for (const slot of slots) {
      const res = await request(`${url}/click/${slot}?placement=rb-drop&recipient=rb-reader-0&list=news`);
      await res.body.dump();
      expect(res.headers.location).toMatch(/fjordstream\.tv\/offer\?c=cmp-6-1-2/);
    }
  });

  it('gives a takeover every slot of its template: no DSP asked, no other ad', async () => {
    const asked = dsp.requests.length;
    const opens = await openAll(['slot-2-1-1', 'slot-2-1-2'], 20, 'to');
    expect(opens.flat().every((c) => c === 'cmp-5-1-1')).toBe(true);
    expect(dsp.requests.length).toBe(asked);
    // The other template of the publisher is not taken over: the DSP is asked for it.
    await openSlot(url, 'slot-2-2-1', 'to-reader-x', 'to-drop');
    expect(dsp.requests.length).toBe(asked + 1);
  });

  it('never shows two advertisers of one exclusion group in one open', async () => {
    const opens = await openAll(['slot-3-1-1', 'slot-3-1-2'], 40, 'ex');
    // Each open wants adv-1 on 600x200 and adv-2 on 300x250: exactly one of them gets it.
    for (const shown of opens) {
      expect(new Set(shown.map((c) => ADVERTISER_OF[c]).filter(Boolean)).size).toBe(1);
    }
    // Without the rival in the open, adv-2 takes its 300x250 slot.
    expect(campaignShown(doc, await openSlot(url, 'slot-3-1-2', 'ex-alone-reader', 'ex-drop'))).toBe(
      'cmp-2-1-2',
    );
  });

  it('serves a sponsorship its share of the slot (30 % within 4 standard deviations) above a higher bid', async () => {
    const n = 600;
    const asked = dsp.requests.length;
    const shown: string[] = [];
    for (let batch = 0; batch < n; batch += 50) {
      shown.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, async (_, i) =>
            campaignShown(doc, await openSlot(url, 'slot-4-1-1', `sp-reader-${batch + i}`, 'sp-drop')),
          ),
        )),
      );
    }
    const sponsored = shown.filter((c) => c === 'cmp-3-2-1').length;
    expect(Math.abs(sponsored - 0.3 * n)).toBeLessThan(4 * Math.sqrt(0.3 * 0.7 * n));
    // The sponsored requests never asked the DSP (whose 20 CPM outbids the sponsor's 1.9); the rest did.
    expect(dsp.requests.length - asked).toBe(n - sponsored);
    expect(shown.filter((c) => c === 'rtb').length).toBeGreaterThan(0);
  });
});
