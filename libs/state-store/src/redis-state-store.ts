import Redis from 'ioredis';
import type { StateStore } from './state-store.port';

/** INCR that sets the TTL only when it creates the counter, in one atomic step. */
const INCREMENT = `
local value = redis.call('INCR', KEYS[1])
if value == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return value`;

/** Stores ARGV[1] only when it is greater than the stored number; atomic, so racers get one winner. */
const ADVANCE_IF_GREATER = `
local current = redis.call('GET', KEYS[1])
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

export interface RedisStateStoreOptions {
  readonly url: string;
  /** Prefix of every key, so that several deployments can share one Redis. */
  readonly keyPrefix: string;
}

/** The distributed state store: Redis, shared by every app instance. */
export class RedisStateStore implements StateStore {
  private readonly redis: Redis;

  constructor(options: RedisStateStoreOptions) {
    this.redis = new Redis(options.url, {
      keyPrefix: options.keyPrefix,
      lazyConnect: false,
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      // Commands issued in the same tick go out in one write: an ad request's few state
      // operations cost one socket write rather than one each.
      enableAutoPipelining: true,
    });
    this.redis.on('error', () => undefined);
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs === undefined) {
      await this.redis.set(key, value);
    } else {
      await this.redis.set(key, value, 'PX', ttlMs);
    }
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(key, value, 'PX', ttlMs, 'NX')) === 'OK';
  }

  async increment(key: string, ttlMs: number): Promise<number> {
    return Number(await this.redis.eval(INCREMENT, 1, key, ttlMs));
  }

  async advanceIfGreater(key: string, value: number, ttlMs: number): Promise<boolean> {
    return Number(await this.redis.eval(ADVANCE_IF_GREATER, 1, key, value, ttlMs)) === 1;
  }

  async extendTtl(key: string, ttlMs: number): Promise<void> {
    // GT: only ever raised (Redis 7); a key without a TTL counts as living for good.
    await this.redis.pexpire(key, ttlMs, 'GT');
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(key);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
