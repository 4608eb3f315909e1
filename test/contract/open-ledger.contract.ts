import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OpenClaim, OpenLedger } from '@app/booking';

/**
 * What every open ledger must do (libs/booking/src/open-ledger.ts): the rules of one email open's
 * reservation and the delivery counters moved with it, all or nothing. `counter` reads a counter.
 */
export function openLedgerContract(
  name: string,
  create: () => Promise<{ ledger: OpenLedger; counter: (key: string) => Promise<number> }>,
): void {
  describe(`open ledger contract: ${name}`, () => {
    let ledger: OpenLedger;
    let counter: (key: string) => Promise<number>;
    let n = 0;
    const run = `${process.pid}:${Date.now()}`;
    const open = () => `test-open:${run}:${(n += 1)}`;
    const plain = (key: string, advertiserId = 'adv-a', groups: string[] = []): OpenClaim => ({
      key,
      ttlMs: 60_000,
      advertiserId,
      track: true,
      groups,
    });
    const roadblock = (key: string, campaignId: string): OpenClaim => ({
      ...plain(key, `adv-of-${campaignId}`),
      roadblock: {
        campaignId,
        plan: new Map([
          ['slot-1', { strategyId: `${campaignId}-s1`, creativeId: `${campaignId}-c1` }],
          ['slot-2', { strategyId: `${campaignId}-s2`, creativeId: `${campaignId}-c2` }],
        ]),
      },
    });
    const goal = (key: string, amount: number, limit: number) => ({ key, amount, limit, ttlMs: 60_000 });

    beforeEach(async () => {
      ({ ledger, counter } = await create());
    });
    afterEach(async () => {
      await ledger.close();
    });

    it('reserves a roadblock on an open no slot has shown yet, with its goal, and serves its plan to every later claim', async () => {
      const key = open();
      const g = `${key}:goal`;
      expect(await ledger.claim(roadblock(key, 'rb-1'), [goal(g, 2, 10)])).toEqual({ kind: 'reserved' });
      expect(await counter(g)).toBe(2);
      const state = await ledger.read(key);
      expect(state.roadblock).toBe('rb-1');
      expect(state.plan.get('slot-2')).toEqual({ strategyId: 'rb-1-s2', creativeId: 'rb-1-c2' });
      for (const later of [plain(key), roadblock(key, 'rb-2'), roadblock(key, 'rb-1')]) {
        const outcome = await ledger.claim(later, [goal(g, 1, 10)]);
        expect(outcome.kind).toBe('roadblocked');
        expect(outcome.kind === 'roadblocked' && outcome.state.plan.get('slot-1')?.creativeId).toBe(
          'rb-1-c1',
        );
      }
      expect(await counter(g)).toBe(2);
    });

    it('closes an open to roadblocks once a slot shows another ad (track), and not when nothing is tracked', async () => {
      const key = open();
      expect(await ledger.claim(plain(key), [])).toEqual({ kind: 'reserved' });
      expect((await ledger.read(key)).roadblock).toBe('');
      expect(await ledger.claim(roadblock(key, 'rb-1'), [goal(`${key}:goal`, 1, 10)])).toEqual({
        kind: 'open_taken',
      });
      expect(await counter(`${key}:goal`)).toBe(0);
      const untracked = open();
      expect(await ledger.claim({ ...plain(untracked), track: false }, [])).toEqual({ kind: 'reserved' });
      expect(await ledger.claim(roadblock(untracked, 'rb-1'), [])).toEqual({ kind: 'reserved' });
    });

    it('keeps two advertisers of one exclusion group out of one open; the same advertiser may come back', async () => {
      const key = open();
      expect(await ledger.claim(plain(key, 'adv-a', ['airlines', 'travel']), [])).toEqual({
        kind: 'reserved',
      });
      expect((await ledger.read(key)).groups.get('airlines')).toBe('adv-a');
      expect(await ledger.claim(plain(key, 'adv-b', ['banks', 'airlines']), [])).toEqual({
        kind: 'excluded',
        group: 'airlines',
      });
      expect((await ledger.read(key)).groups.has('banks')).toBe(false);
      expect(await ledger.claim(plain(key, 'adv-a', ['airlines']), [])).toEqual({ kind: 'reserved' });
      expect(await ledger.claim(plain(key, 'adv-c', ['banks']), [])).toEqual({ kind: 'reserved' });
    });

    it('writes nothing when a counter would pass its limit', async () => {
      const key = open();
      const g = `${key}:goal`;
      expect(await ledger.claim(roadblock(key, 'rb-1'), [goal(`${g}:ok`, 1, 5), goal(g, 3, 2)])).toEqual({
        kind: 'limit',
        index: 1,
      });
      expect(await counter(`${g}:ok`)).toBe(0);
      expect((await ledger.read(key)).roadblock).toBeUndefined();
      expect(await ledger.claim(roadblock(key, 'rb-2'), [goal(g, 2, 2)])).toEqual({ kind: 'reserved' });
    });

    it('lets one claim win an open raced by many: a roadblock alone, or no roadblock at all', async () => {
      for (let round = 0; round < 10; round += 1) {
        const key = open();
        const claims = Array.from({ length: 12 }, (_, i) =>
          i % 3 === round % 3 ? plain(key) : roadblock(key, `rb-${i}`),
        );
        const outcomes = await Promise.all(claims.map((c) => ledger.claim(c, [])));
        const roadblocks = outcomes.filter((o, i) => o.kind === 'reserved' && claims[i].roadblock);
        const plains = outcomes.filter((o, i) => o.kind === 'reserved' && !claims[i].roadblock);
        expect(roadblocks.length).toBeLessThanOrEqual(1);
        expect(roadblocks.length === 1 ? plains.length : 1).toBe(roadblocks.length === 1 ? 0 : 1);
        expect(outcomes.every((o) => o.kind !== 'limit' && o.kind !== 'excluded')).toBe(true);
      }
    });

    it('forgets an open after its TTL', async () => {
      const key = open();
      expect(await ledger.claim({ ...roadblock(key, 'rb-1'), ttlMs: 30 }, [])).toEqual({ kind: 'reserved' });
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect((await ledger.read(key)).roadblock).toBeUndefined();
      expect(await ledger.claim(roadblock(key, 'rb-2'), [])).toEqual({ kind: 'reserved' });
    });
  });
}
