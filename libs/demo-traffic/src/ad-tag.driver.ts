import { Agent, request } from 'undici';
import type { Catalog } from '@app/catalog';
import { AGES, EMAIL_DOMAINS, GENDERS, SEGMENTS } from './audience.data';
import { Random, Weighted } from './random';

/** Real user agents of the clients that open newsletters, so that device detection has work to do. */
const USER_AGENTS = new Weighted<string>([
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
    24,
  ],
  ['Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', 20],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    14,
  ],
  [
    'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 10.0; WOW64; Trident/7.0; .NET4.0C; .NET4.0E; Microsoft Outlook 16.0.17328; ms-office; MSOffice 16)',
    10,
  ],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)', 10],
  [
    'Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
    12,
  ],
  ['Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148', 5],
  ['YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html', 5],
]);

export interface AdTagTrafficOptions {
  /** The auction app's base URL. */
  readonly auctionUrl: string;
  /** Emails opened (one new auction each). */
  readonly opens: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  readonly seed: number;
  /** The placement (email drop) id suffix, e.g. the day the newsletter went out (`20261122`). */
  readonly dropId: string;
}

export interface AdTagTrafficResult {
  readonly opens: number;
  readonly reopens: number;
  readonly clicks: number;
  /** Readers who then hit the advertisers' conversion pixels. */
  readonly convertingReaders: number;
  /** Requests not answered as an ad tag answers (anything but 200/302). */
  readonly failures: number;
}

/** Shares that shape the demo: newsletters see about these rates. */
const REOPEN_RATE = 0.35;
const CLICK_RATE = 0.04;
const CONVERSION_RATE = 0.15;
const POST_VIEW_RATE = 0.01;

/**
 * Drives the ad tag over HTTP as newsletter readers would: opens of every slot of the catalog,
 * reopens, clicks and advertiser conversions, so that demo data comes through the real auction path.
 */
export async function driveAdTagTraffic(
  catalog: Catalog,
  options: AdTagTrafficOptions,
): Promise<AdTagTrafficResult> {
  const random = new Random(options.seed);
  const slots = catalog.document.adSlots;
  const agent = new Agent({ connections: options.concurrency });
  const counts = { opens: 0, reopens: 0, clicks: 0, convertingReaders: 0, failures: 0 };
  const get = async (path: string, userAgent: string): Promise<string | undefined> => {
    try {
      const res = await request(`${options.auctionUrl}${path}`, {
        dispatcher: agent,
        headers: { 'user-agent': userAgent },
      });
      await res.body.dump();
      if (res.statusCode !== 200 && res.statusCode !== 302) {
        counts.failures += 1;
      }
      const location = res.headers.location;
      return Array.isArray(location) ? location[0] : location;
    } catch {
      counts.failures += 1;
      return undefined;
    }
  };
  const plans = Array.from({ length: options.opens }, (_, i) => {
    const slot = slots[random.int(slots.length)];
    const { publisher } = catalog.slotLineage(slot.id);
    const query = new URLSearchParams({
      placement: `plc-${publisher?.id ?? 'x'}-${options.dropId}-${1 + random.int(2)}`,
      list: `list-${publisher?.id ?? 'x'}-${1 + random.int(3)}`,
      recipient: `demo-${options.seed}-${i.toString(36).padStart(6, '0')}`,
      email_domain: EMAIL_DOMAINS.pick(random),
      age: AGES.pick(random),
      gender: GENDERS.pick(random),
    });
    const [key, value] = SEGMENTS.pick(random);
    if (key) {
      query.append('kv', `${key}:${value}`);
    }
    return {
      slot: slot.id,
      query: query.toString(),
      recipient: query.get('recipient')!,
      userAgent: USER_AGENTS.pick(random),
      reopens: random.chance(REOPEN_RATE) ? 1 + random.int(3) : 0,
      click: random.chance(CLICK_RATE),
      convert: random.next(),
    };
  });
  let next = 0;
  const worker = async () => {
    while (next < plans.length) {
      const plan = plans[next++];
      await get(`/img/${plan.slot}?${plan.query}`, plan.userAgent);
      counts.opens += 1;
      for (let r = 0; r < plan.reopens; r += 1) {
        await get(`/img/${plan.slot}?${plan.query}&cb=${r}`, plan.userAgent);
        counts.reopens += 1;
      }
      if (plan.click) {
        await get(`/click/${plan.slot}?${plan.query}`, plan.userAgent);
        counts.clicks += 1;
      }
      const converts = plan.click ? plan.convert < CONVERSION_RATE : plan.convert < POST_VIEW_RATE;
      if (converts) {
        for (const advertiser of catalog.document.advertisers) {
          // The reader converts with whichever advertiser showed the ad; the others attribute nothing.
          await get(
            `/conv/${advertiser.id}?recipient=${plan.recipient}&order=${plan.recipient}`,
            plan.userAgent,
          );
        }
        counts.convertingReaders += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  await agent.close();
  return counts;
}
