import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { BookingDesk, RedisDeliveryCounters, type BookingRequest } from '@app/booking';
import { DEMO_CATALOG_PATH, buildCatalog } from '@app/catalog';

/**
 * One auction process racing for a booked goal: `node booking-racer.child.js <redis url> <key
 * prefix> <goal> <start at ms>`. Waits for the start, then screens and commits deliveries of the
 * booked strategy, 64 at a time, until the goal refuses it; prints what it delivered.
 */
async function main(): Promise<void> {
  const [url, keyPrefix, goal, startAt] = process.argv.slice(2);
  const doc = JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as {
    campaigns: { id: string; booking?: unknown }[];
  };
  doc.campaigns.find((c) => c.id === 'cmp-1-1-1')!.booking = {
    goals: [{ metric: 'impressions', lifetime: Number(goal) }],
    pacing: 'asap',
  };
  const desk = new BookingDesk(buildCatalog(doc), new RedisDeliveryCounters({ url, keyPrefix }));
  const base: Omit<BookingRequest, 'nowMs' | 'readerKey'> = {
    timeZone: 'UTC',
    publisherId: 'pub-1',
    templateId: 'tpl-1-1',
    adSlotId: 'slot-1-1-1',
    listId: '',
    keyValues: [],
    country: 'US',
    region: '',
    deviceType: 'PC',
    os: '',
    browser: '',
    emailDomain: '',
    age: '',
    gender: '',
  };
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())));
  let delivered = 0;
  let refusedAtCommit = 0;
  let done = false;
  let n = 0;
  const worker = async () => {
    while (!done) {
      const request = { ...base, nowMs: Date.now(), readerKey: `r:${process.pid}:${n++}` };
      const candidate = { strategyId: 'str-1-1-1-1', priceMicros: 1_600_000 };
      const { verdicts, counts } = await desk.screen([candidate], request);
      if (!verdicts[0].eligible) {
        done = true;
        break;
      }
      const committed = await desk.commit(candidate.strategyId, request, candidate.priceMicros, counts);
      if (committed.eligible) {
        delivered++;
      } else {
        refusedAtCommit++;
      }
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  process.stdout.write(`${JSON.stringify({ delivered, refusedAtCommit })}\n`);
  process.exit(0);
}

void main();
