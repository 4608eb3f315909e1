import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DspSimulator } from '@app/dsp-simulator';
import { listeningPort } from '@app/runtime';
import { withoutBookings } from '@app/testing';
import { startReporting, writeTestCatalog, type RunningReporting } from './reporting-system';

/** The day of the e2e clock (FIXED_NOW, 2026-11-22): the takeover's flight. */
const TODAY = '2026-11-22';

type Row = Record<string, unknown>;
type Doc = Record<string, Row[]>;

/**
 * The bookings of docs/direct-campaigns.md over HTTP, on a catalog without the demo's own bookings
 * and a DSP bidding 20 CPM on everything:
 * - pub-1 (tpl-1-1: 600x200, 300x250, 300x250): cmp-6-1-2 (adv-6) a roadblock at 30-30.5 CPM;
 *   on an open whose tag says `kv=rival:1`, adv-1's str-1-1-1-2 bids 31 on the 300x250 slots, so
 *   the open goes whole to whichever slot is claimed first;
 * - pub-2 (tpl-2-1: 600x200, 300x250): cmp-5-1-1 (adv-5, 1.8 CPM) takes over the template today;
 * - pub-3 (tpl-3-1: 600x200, 300x250): adv-1 (cmp-1-1-1, 25 CPM on both sizes) and adv-2
 *   (cmp-2-1-2, 40 CPM on 300x250) share the exclusion group `airlines`;
 * - slot-4-1-1: cmp-3-2-1 (adv-3, 1.9 CPM) sponsors 30 % of it; nothing else direct runs there.
 */
export function bookedCatalog(dspUrl: string): string {
  return writeTestCatalog((doc: Doc) => {
    withoutBookings(doc as Parameters<typeof withoutBookings>[0]);
    const campaign = (id: string) => doc.campaigns.find((c) => c.id === id)!;
    const strategy = (id: string) => doc.strategies.find((s) => s.id === id)!;
    doc.dsps = [{ ...doc.dsps[0], endpoint: dspUrl, timeoutMs: 1000 }];
    campaign('cmp-6-1-2').booking = { targeting: { templates: { include: ['tpl-1-1'] } } };
    strategy('str-6-1-2-1').cpmMicros = 30_000_000;
    strategy('str-6-1-2-2').cpmMicros = 30_500_000;
    campaign('cmp-1-1-1').booking = {
      exclusionGroups: ['airlines'],
      targeting: { publishers: { include: ['pub-1', 'pub-3'] } },
    };
    strategy('str-1-1-1-1').cpmMicros = 25_000_000;
    strategy('str-1-1-1-2').cpmMicros = 31_000_000;
    strategy('str-1-1-1-2').booking = { targeting: { keyValuesAllOf: [{ key: 'rival', values: ['1'] }] } };
    campaign('cmp-2-1-2').booking = {
      exclusionGroups: ['airlines'],
      targeting: { publishers: { include: ['pub-3'] } },
    };
    strategy('str-2-1-2-2').cpmMicros = 40_000_000;
    campaign('cmp-5-1-1').booking = { takeoverTemplateId: 'tpl-2-1', start: TODAY, end: TODAY };
    campaign('cmp-3-2-1').booking = {
      priority: 'sponsorship',
      sponsorshipShare: 0.3,
      targeting: { adSlots: { include: ['slot-4-1-1'] } },
    };
  });
}

/** Which campaign an answer shows: a catalog creative's image is `/creatives/<id>.svg`; else RTB. */
export function campaignShown(doc: Doc, location: string | undefined): string {
  const match = /\/creatives\/([^/?]+)\.svg/.exec(location ?? '');
  if (!match) {
    return location ? 'rtb' : 'none';
  }
  const creative = doc.creatives.find((c) => c.id === decodeURIComponent(match[1]));
  const strategy = doc.strategies.find((s) => s.id === creative?.strategyId);
  return typeof strategy?.campaignId === 'string' ? strategy.campaignId : 'unknown';
}

/** The ad tag of one slot for one reader's open of one email (`reader`: 8 characters or more). */
export async function openSlot(
  baseUrl: string,
  slotId: string,
  reader: string,
  placement: string,
  extra = '',
) {
  const query = `placement=${placement}&recipient=${reader}&list=news${extra}`;
  const res = await request(`${baseUrl}/img/${slotId}?${query}`, { headers: { connection: 'close' } });
  await res.body.dump();
  return res.headers.location as string | undefined;
}

const ADVERTISER: Readonly<Record<string, string>> = {
  'cmp-1-1-1': 'adv-1',
  'cmp-2-1-2': 'adv-2',
};

describe('exchange: roadblocks, takeovers, sponsorship and exclusion over HTTP', () => {
  let api: RunningReporting;
  let dsp: DspSimulator;
  let url: string;
  let doc: Doc;

  beforeAll(async () => {
    dsp = await DspSimulator.start({ seat: 'alpha-1', priceCpm: { min: 20, max: 20 } });
    const path = bookedCatalog(dsp.bidUrl);
    doc = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8')) as Doc;
    api = await startReporting('embedded', { CATALOG_PATH: path, AUCTION_TMAX_MS: '1000' });
    url = `http://127.0.0.1:${listeningPort(api.system.auction)}`;
  });

  afterAll(async () => {
    await api?.system.close();
    await dsp?.close();
  });

  /** The campaigns shown in each slot of `opens` opens, their slots requested all at once. */
  const openAll = (
    slots: readonly string[],
    opens: number,
    tag: string,
    extra: (i: number) => string = () => '',
  ) =>
    Promise.all(
      Array.from({ length: opens }, (_, i) =>
        Promise.all(
          // Each open asks its slots in another order.
          [...slots.slice(i % slots.length), ...slots.slice(0, i % slots.length)].map(async (slot) =>
            campaignShown(doc, await openSlot(url, slot, `${tag}-reader-${i}`, `${tag}-drop`, extra(i))),
          ),
        ),
      ),
    );

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
      const first = [...slots.slice(i % 3), ...slots.slice(0, i % 3)];
      expect(again).toEqual(slots.map((slot) => opens[i][first.indexOf(slot)]));
    }
  });

  it('gives a takeover every slot of its template: no DSP asked, no other ad', async () => {
    const asked = dsp.requests.length;
    const opens = await openAll(['slot-2-1-1', 'slot-2-1-2'], 20, 'to');
    expect(opens.flat().every((c) => c === 'cmp-5-1-1')).toBe(true);
    expect(dsp.requests.length).toBe(asked);
    // The other template of the publisher is not taken over: the DSP wins it.
    expect(campaignShown(doc, await openSlot(url, 'slot-2-2-1', 'to-reader-x', 'to-drop'))).toBe('rtb');
  });

  it('never shows two advertisers of one exclusion group in one open', async () => {
    const opens = await openAll(['slot-3-1-1', 'slot-3-1-2'], 40, 'ex');
    // Each open wants adv-1 on 600x200 and adv-2 on 300x250: exactly one of them gets it.
    for (const shown of opens) {
      const advertisers = new Set(shown.map((c) => ADVERTISER[c]).filter(Boolean));
      expect(advertisers.size).toBe(1);
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
    // The rest went to the DSP's higher bid; the sponsored requests never asked it.
    expect(shown.filter((c) => c === 'rtb').length).toBe(n - sponsored);
    expect(dsp.requests.length - asked).toBe(n - sponsored);
  });
});
