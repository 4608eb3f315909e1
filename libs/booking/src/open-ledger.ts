import Redis from 'ioredis';
import type { CounterLimit } from './booked-layer';
import type { DeliveryCounters } from './delivery-counters.port';
import {
  EMPTY_OPEN,
  decodeOpen,
  openRefusal,
  openWrites,
  type OpenClaim,
  type OpenOutcome,
  type OpenState,
} from './email-open';
import { MemoryDeliveryCounters } from './memory-delivery-counters';

type Limit = Pick<CounterLimit, 'key' | 'amount' | 'limit' | 'ttlMs'>;

/**
 * The reservations of email opens (docs/direct-campaigns.md, "Email opens"), kept beside the
 * delivery counters: a claim checks the open and every counter limit and then writes both, all in
 * one atomic step, so that two slots of one open decided at once on two processes never show a
 * roadblock and another ad, or two rivals of an exclusion group.
 */
export interface OpenLedger {
  read(key: string): Promise<OpenState>;
  claim(claim: OpenClaim, limits: readonly Limit[]): Promise<OpenOutcome>;
  close(): Promise<void>;
}

interface MemoryOpen {
  readonly fields: Record<string, string>;
  expiresAt: number;
}

/** The embedded ledger, over the same process's memory counters (each call runs to its end alone). */
export class MemoryOpenLedger implements OpenLedger {
  private readonly opens = new Map<string, MemoryOpen>();

  constructor(
    private readonly counters: MemoryDeliveryCounters,
    private readonly clock: () => number = Date.now,
  ) {}

  async read(key: string): Promise<OpenState> {
    const open = this.live(key);
    return open ? decodeOpen(open.fields) : EMPTY_OPEN;
  }

  async claim(claim: OpenClaim, limits: readonly Limit[]): Promise<OpenOutcome> {
    const fields = this.live(claim.key)?.fields ?? {};
    const refused = openRefusal(fields, claim);
    if (refused) {
      return refused;
    }
    const failed = this.counters.reserveNow(limits);
    if (failed >= 0) {
      return { kind: 'limit', index: failed };
    }
    const writes = openWrites(fields, claim);
    if (writes.length > 0) {
      const open = this.opens.get(claim.key) ?? { fields: {}, expiresAt: 0 };
      for (const [field, value] of writes) {
        open.fields[field] = value;
      }
      open.expiresAt = this.clock() + claim.ttlMs;
      this.opens.set(claim.key, open);
    }
    return { kind: 'reserved' };
  }

  async close(): Promise<void> {
    this.opens.clear();
  }

  private live(key: string): MemoryOpen | undefined {
    const open = this.opens.get(key);
    if (open && open.expiresAt <= this.clock()) {
      this.opens.delete(key);
      return undefined;
    }
    return open;
  }
}

/**
 * The claim of `openRefusal` and `openWrites` (email-open.ts) in one script, with the counters'
 * reservation of RedisDeliveryCounters between them. KEYS[1] is the open, the others counters.
 * ARGV: the open's TTL, the roadblock campaign ('' for none), the advertiser, track ('1'/'0'), the
 * number of groups and the groups, the number of plan entries and their field/value pairs, then
 * amount, limit and TTL per counter.
 */
const CLAIM = `
local open = KEYS[1]
local rb = ARGV[2]
local adv = ARGV[3]
local i = 5
local ng = tonumber(ARGV[i]); i = i + 1
local groups = {}
for j = 1, ng do groups[j] = ARGV[i]; i = i + 1 end
local np = tonumber(ARGV[i]); i = i + 1
local plan = {}
for j = 1, 2 * np do plan[j] = ARGV[i]; i = i + 1 end
local held = redis.call('HGET', open, 'rb')
if held and held ~= '' then return {'roadblocked', unpack(redis.call('HGETALL', open))} end
if rb ~= '' and redis.call('EXISTS', open) == 1 then return {'open_taken'} end
for j = 1, ng do
  local other = redis.call('HGET', open, 'g:' .. groups[j])
  if other and other ~= adv then return {'excluded', groups[j]} end
end
for k = 2, #KEYS do
  local a = i + 3 * (k - 2)
  local current = tonumber(redis.call('GET', KEYS[k]) or '0')
  if current + tonumber(ARGV[a]) > tonumber(ARGV[a + 1]) then return {'limit', tostring(k - 2)} end
end
for k = 2, #KEYS do
  local a = i + 3 * (k - 2)
  local amount = tonumber(ARGV[a])
  if redis.call('INCRBY', KEYS[k], amount) == amount then redis.call('PEXPIRE', KEYS[k], ARGV[a + 2]) end
end
local wrote = false
if rb ~= '' then
  redis.call('HSET', open, 'rb', rb)
  for j = 1, 2 * np, 2 do redis.call('HSET', open, 'p:' .. plan[j], plan[j + 1]) end
  wrote = true
elseif ARGV[4] == '1' and not held then
  redis.call('HSET', open, 'rb', '')
  wrote = true
end
for j = 1, ng do
  redis.call('HSET', open, 'g:' .. groups[j], adv)
  wrote = true
end
if wrote then redis.call('PEXPIRE', open, ARGV[1]) end
return {'reserved'}`;

/** The distributed ledger: the same Redis and key prefix as RedisDeliveryCounters. */
export class RedisOpenLedger implements OpenLedger {
  private readonly redis: Redis;

  constructor(options: { readonly url: string; readonly keyPrefix: string }) {
    this.redis = new Redis(options.url, {
      keyPrefix: options.keyPrefix,
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
    });
    this.redis.on('error', () => undefined);
  }

  async read(key: string): Promise<OpenState> {
    const fields = await this.redis.hgetall(key);
    return Object.keys(fields).length === 0 ? EMPTY_OPEN : decodeOpen(fields);
  }

  async claim(claim: OpenClaim, limits: readonly Limit[]): Promise<OpenOutcome> {
    const plan = [...(claim.roadblock?.plan ?? [])];
    const args: (string | number)[] = [
      Math.max(1, Math.round(claim.ttlMs)),
      claim.roadblock?.campaignId ?? '',
      claim.advertiserId,
      claim.track ? '1' : '0',
      claim.groups.length,
      ...claim.groups,
      plan.length,
      ...plan.flatMap(([slotId, e]) => [slotId, `${e.strategyId}\n${e.creativeId}`]),
    ];
    for (const l of limits) {
      args.push(Math.round(l.amount), Math.floor(l.limit), Math.max(1, Math.round(l.ttlMs)));
    }
    const keys = [claim.key, ...limits.map((l) => l.key)];
    const answer = (await this.redis.eval(CLAIM, keys.length, ...keys, ...args)) as string[];
    switch (answer[0]) {
      case 'reserved':
        return { kind: 'reserved' };
      case 'limit':
        return { kind: 'limit', index: Number(answer[1]) };
      case 'open_taken':
        return { kind: 'open_taken' };
      case 'excluded':
        return { kind: 'excluded', group: answer[1] };
      default: {
        const fields: Record<string, string> = {};
        for (let j = 1; j + 1 < answer.length; j += 2) {
          fields[answer[j]] = answer[j + 1];
        }
        return { kind: 'roadblocked', state: decodeOpen(fields) };
      }
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/**
 * The ledger that goes with the delivery counters: in memory over memory counters (the embedded
 * mode), in Redis otherwise, under the counters' prefix.
 */
export function openLedgerFor(
  counters: DeliveryCounters,
  settings: { readonly REDIS_URL?: string; readonly REDIS_KEY_PREFIX: string },
): OpenLedger {
  if (counters instanceof MemoryDeliveryCounters) {
    return new MemoryOpenLedger(counters);
  }
  if (!settings.REDIS_URL) {
    throw new Error('open reservations need REDIS_URL when the delivery counters are not in memory');
  }
  return new RedisOpenLedger({ url: settings.REDIS_URL, keyPrefix: `${settings.REDIS_KEY_PREFIX}booking:` });
}
