import { describe, inject } from 'vitest';
import { RedisStateStore } from '@app/state-store';
import { STACK, requireOrSkip } from '@app/testing';
import { stateStoreContract } from './state-store.contract';

describe.runIf(requireOrSkip(inject('stack').redis, `Redis at ${STACK.redisUrl} (npm run stack:up)`))(
  'redis',
  () => {
    stateStoreContract(
      'redis',
      async () => new RedisStateStore({ url: STACK.redisUrl, keyPrefix: 'adx-test:' }),
    );
  },
);
