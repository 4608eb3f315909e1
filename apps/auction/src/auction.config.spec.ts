import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigException, loadConfig } from '@app/config';
import { AuctionConfig, auctionWorkers } from './auction.config';

const REDIS = { REDIS_URL: 'redis://127.0.0.1:6379' };

describe('AuctionConfig: AUCTION_WORKERS', () => {
  it('runs one process per core by default when a shared state store is configured, else one', () => {
    expect(auctionWorkers(loadConfig(AuctionConfig, REDIS))).toBe(availableParallelism());
    expect(auctionWorkers(loadConfig(AuctionConfig, {}))).toBe(1);
    expect(auctionWorkers(loadConfig(AuctionConfig, { ...REDIS, AUCTION_WORKERS: '3' }))).toBe(3);
  });

  it('refuses several workers without Redis: each would keep decisions of its own', () => {
    expect(() => loadConfig(AuctionConfig, { AUCTION_WORKERS: '2' })).toThrow(ConfigException);
    expect(() => loadConfig(AuctionConfig, { AUCTION_WORKERS: '2' })).toThrow(/AUCTION_WORKERS.*REDIS_URL/);
    expect(auctionWorkers(loadConfig(AuctionConfig, { AUCTION_WORKERS: '1' }))).toBe(1);
  });
});
