import { request } from 'undici';
import { withoutBookings, writeTestCatalog } from '@app/testing';

/**
 * The catalog and the ad tag of the direct-priority tests (test/e2e/direct-priorities.test.ts on
 * one process, test/integration/direct-priorities-workers.test.ts on two sharing Redis).
 */

type Row = Record<string, unknown>;
export type CatalogDoc = Record<string, Row[]>;
type Doc = CatalogDoc;

/**
 * The bookings of docs/direct-campaigns.md over HTTP, on a catalog without the demo's own bookings
 * and a DSP bidding 20 CPM on everything:
 * - pub-1 (tpl-1-1: 600x200, 300x250, 300x250): cmp-6-1-2 (adv-6) a roadblock at 30-30.5 CPM;
 *   on an open whose tag says `kv=rival:1`, adv-1's str-1-1-1-2 bids 31 on the 300x250 slots, so
 *   the open goes whole to whichever slot is claimed first;
 * - pub-2 (tpl-2-1: 600x200, 300x250): cmp-5-1-1 (adv-5, 1.8 CPM) takes over the template on
 *   `today` (the servers' clock, UTC: pub-2 has no time zone);
 * - pub-3 (tpl-3-1: 600x200, 300x250): adv-1 (cmp-1-1-1, 25 CPM on both sizes) and adv-2
 *   (cmp-2-1-2, 40 CPM on 300x250) share the exclusion group `airlines`;
 * - slot-4-1-1: cmp-3-2-1 (adv-3, 1.9 CPM) sponsors 30 % of it; nothing else direct runs there.
 */
export function bookedCatalog(dspUrl: string, today: string): string {
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
    campaign('cmp-5-1-1').booking = { takeoverTemplateId: 'tpl-2-1', start: today, end: today };
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

export const ADVERTISER_OF: Readonly<Record<string, string>> = {
  'cmp-1-1-1': 'adv-1',
  'cmp-2-1-2': 'adv-2',
};

/**
 * The campaign shown in each slot of `opens` opens of one email by as many readers, each open's
 * slots requested all at once, in another order for each open; `extra(i)` adds to open i's query.
 */
export function openAll(
  baseUrl: string,
  doc: CatalogDoc,
  slots: readonly string[],
  opens: number,
  tag: string,
  extra: (i: number) => string = () => '',
): Promise<string[][]> {
  return Promise.all(
    Array.from({ length: opens }, (_, i) => {
      const order = [...slots.slice(i % slots.length), ...slots.slice(0, i % slots.length)];
      return Promise.all(
        order.map(async (slot) => ({
          slot,
          shown: campaignShown(
            doc,
            await openSlot(baseUrl, slot, `${tag}-reader-${i}`, `${tag}-drop`, extra(i)),
          ),
        })),
      ).then((answers) => slots.map((slot) => answers.find((a) => a.slot === slot)!.shown));
    }),
  );
}
