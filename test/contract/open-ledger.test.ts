import Redis from 'ioredis';
import { describe, inject } from 'vitest';
import { MemoryDeliveryCounters, MemoryOpenLedger, RedisOpenLedger } from '@app/booking';
import { STACK, requireOrSkip } from '@app/testing';
import { openLedgerContract } from './open-ledger.contract';

openLedgerContract('memory', async () => {
  const counters = new MemoryDeliveryCounters();
  return { ledger: new MemoryOpenLedger(counters), counter: async (key) => counters.value(key) };
});

describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'redis',
  () => {
    const keyPrefix = `adx-test:open-ledger:${process.pid}:`;
    openLedgerContract('redis', async () => {
      const redis = new Redis(STACK.redisUrl, { keyPrefix });
      const ledger = new RedisOpenLedger({ url: STACK.redisUrl, keyPrefix });
      return {
        ledger: {
          read: (key) => ledger.read(key),
          claim: (claim, limits) => ledger.claim(claim, limits),
          close: async () => {
            await ledger.close();
            redis.disconnect();
          },
        },
        counter: async (key) => Number((await redis.get(key)) ?? 0),
      };
    });
  },
);
