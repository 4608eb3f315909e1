import { afterAll, describe, expect, it } from 'vitest';
import type { AdvertiserRecord } from '@app/catalog';
import { loadConfig } from '@app/config';
import { MemoryStateStore } from '@app/state-store';
import { AuctionConfig } from '../auction.config';
import type { AdDecision } from '../core/ad-decision';
import { NO_WINNER } from '../core/event-dimensions';
import { DecisionStore } from './decision.store';

const HOUR = 3_600_000;
const advertiser = { id: 'adv-1', postClickWindowHours: 240, postViewWindowHours: 48 } as AdvertiserRecord;

/** What a decision kept as seen reads back as: what only its first view needed is gone. */
const viewed = (d: AdDecision): AdDecision => ({
  ...d,
  impressionTrackers: [],
  spendMicros: 0,
  revenueMicros: 0,
});

const decision: AdDecision = {
  auctionId: '0f8fad5b-d9cb-469f-a165-70867728950e',
  userId: '4f1c2a3b-0000-4000-8000-000000000001',
  filled: true,
  imageUrl: 'https://cdn.example/i.png',
  clickUrl: 'https://dsp.example/click',
  impressionTrackers: ['https://dsp.example/imp'],
  clickTrackers: [],
  context: {
    publisher_id: 'pub-1',
    publisher_domain: 'p.example',
    template_id: 't',
    ad_slot_id: 'slot-1-1-1',
    size: '600x200',
    placement_id: 'drop-1',
    list_id: '',
    segment_key: '',
    segment_value: '',
    age: '',
    gender: '',
    email_domain: '',
    country: '',
    region: '',
    metro: '',
    zip: '',
    device_maker: '',
    device_model: '',
    device_type: 'PC',
    os: 'Windows',
    browser: 'Chrome',
  },
  winner: { ...NO_WINNER, advertiser_id: 'adv-1', demand_type: 'exchange', strategy_id: 'str-1' },
  dspId: 'dsp-alpha',
  clearingMicros: 2_010_000,
  spendMicros: 2010,
  revenueMicros: 1608,
};

describe('DecisionStore', () => {
  let now = Date.parse('2026-11-20T09:00:00Z');
  const state = new MemoryStateStore(() => now);
  afterAll(() => state.close());
  const config = loadConfig(AuctionConfig, { DECISION_TTL_HOURS: '24' });
  const store = new DecisionStore(state, config);

  it('keeps the first decision of a key only, and reads it back whole', async () => {
    const first = await store.keep('slot|drop|r:a', decision, true, advertiser);
    const second = await store.keep(
      'slot|drop|r:a',
      { ...decision, clickUrl: 'https://x.example/' },
      true,
      advertiser,
    );
    expect(first.kept).toBe(true);
    expect(second).toMatchObject({
      kept: false,
      stored: { seen: true, decision: { clickUrl: decision.clickUrl } },
    });
    expect((await store.get('slot|drop|r:a'))?.decision).toEqual(viewed(decision));
  });

  it('counts the first view of a decision a click made once, and none of one kept as seen', async () => {
    await store.keep('slot|drop|r:b', decision, false, advertiser);
    const stored = (await store.get('slot|drop|r:b'))!;
    expect(stored.decision.impressionTrackers).toEqual(decision.impressionTrackers);
    expect(await store.firstView('slot|drop|r:b', stored, advertiser)).toBe(true);
    expect(await store.firstView('slot|drop|r:b', stored, advertiser)).toBe(false);
    const seen = (await store.get('slot|drop|r:a'))!;
    expect(await store.firstView('slot|drop|r:a', seen, advertiser)).toBe(false);
  });

  it('keeps a decision for its reopen window, or its view window when longer, then forgets it', async () => {
    await store.keep('slot|drop|r:c', decision, true, advertiser);
    now += 47 * HOUR;
    expect(await store.get('slot|drop|r:c')).toBeDefined();
    now += 2 * HOUR;
    expect(await store.get('slot|drop|r:c')).toBeUndefined();
  });

  it('attributes through a touch of either user key for its window; a click keeps the decision as long', async () => {
    // A process of its own: the earlier tests' store wrote the creative (at an earlier "now").
    const store = new DecisionStore(state, config);
    const key = 'slot|drop|r:d';
    const { stored } = await store.keep(key, decision, true, advertiser);
    await store.touch('view', 'adv-1', ['r:d', 'c:cookie-d'], key, stored, now, 48);
    await store.touch('click', 'adv-1', ['r:d', 'c:cookie-d'], key, stored, now + 1000, 240);
    expect(await store.lastTouch('view', 'adv-1', 'c:cookie-d')).toEqual({
      at: now,
      decision: viewed(decision),
    });
    now += 100 * HOUR;
    expect(await store.lastTouch('view', 'adv-1', 'r:d')).toBeUndefined();
    // Another process (which never read the creative) finds the decision and its creative too.
    const other = new DecisionStore(state, config);
    expect(await other.lastTouch('click', 'adv-1', 'c:cookie-d')).toEqual({
      at: now - 100 * HOUR + 1000,
      decision: viewed(decision),
    });
    expect(await store.lastTouch('click', 'adv-2', 'c:cookie-d')).toBeUndefined();
  });
});
