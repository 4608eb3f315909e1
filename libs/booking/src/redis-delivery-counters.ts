import Redis from 'ioredis';
import type { DeliveryCounters } from './delivery-counters.port';

/**
 * All or none in one script: every counter is checked against its limit, then every one is
 * incremented; a new counter gets its TTL. Redis runs a script alone, so two auction processes
 * can never both take the last impression of a goal. ARGV holds amount, limit, TTL per key.
 */
const RESERVE = `
for i = 1, #KEYS do
  local current = tonumber(redis.call('GET', KEYS[i]) or '0')
  if current + tonumber(ARGV[3 * i - 2]) > tonumber(ARGV[3 * i - 1]) then return i - 1 end
end
for i = 1, #KEYS do
  local amount = tonumber(ARGV[3 * i - 2])
  if redis.call('INCRBY', KEYS[i], amount) == amount then
    redis.call('PEXPIRE', KEYS[i], ARGV[3 * i])
  end
end
return -1`;

/**
 * KEYS[1] marks the event (a click of one decision) as counted; the other keys are added to only
 * when this call set the mark. ARGV: the mark's TTL, then amount and TTL per other key.
 */
const ADD_ONCE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
for i = 2, #KEYS do
  local amount = tonumber(ARGV[2 * i - 2])
  if redis.call('INCRBY', KEYS[i], amount) == amount then redis.call('PEXPIRE', KEYS[i], ARGV[2 * i - 1]) end
end
return 1`;

export interface RedisDeliveryCountersOptions {
  readonly url: string;
  /** Prefix of every key, so that deployments and tests can share one Redis. */
  readonly keyPrefix: string;
}

/**
 * The distributed delivery counters. A single Redis (not a cluster): a reservation touches a
 * campaign's, a strategy's and a reader's keys in one script.
 */
export class RedisDeliveryCounters implements DeliveryCounters {
  private readonly redis: Redis;

  constructor(options: RedisDeliveryCountersOptions) {
    this.redis = new Redis(options.url, {
      keyPrefix: options.keyPrefix,
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
    });
    this.redis.on('error', () => undefined);
  }

  async reserve(
    limits: readonly { key: string; amount: number; limit: number; ttlMs: number }[],
  ): Promise<number> {
    if (limits.length === 0) {
      return -1;
    }
    const args: (string | number)[] = [];
    for (const l of limits) {
      args.push(Math.round(l.amount), Math.floor(l.limit), Math.max(1, Math.round(l.ttlMs)));
    }
    return Number(await this.redis.eval(RESERVE, limits.length, ...limits.map((l) => l.key), ...args));
  }

  async addOnce(
    onceKey: string,
    onceTtlMs: number,
    adds: readonly { key: string; amount: number; ttlMs: number }[],
  ): Promise<boolean> {
    const args: (string | number)[] = [Math.max(1, Math.round(onceTtlMs))];
    for (const a of adds) {
      args.push(Math.round(a.amount), Math.max(1, Math.round(a.ttlMs)));
    }
    const keys = [onceKey, ...adds.map((a) => a.key)];
    return Number(await this.redis.eval(ADD_ONCE, keys.length, ...keys, ...args)) === 1;
  }

  async read(keys: readonly string[]): Promise<number[]> {
    if (keys.length === 0) {
      return [];
    }
    return (await this.redis.mget(...keys)).map((v) => (v === null ? 0 : Number(v)));
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
