import type { DeliveryCounters } from './delivery-counters.port';
import { MemoryDeliveryCounters } from './memory-delivery-counters';
import { RedisDeliveryCounters } from './redis-delivery-counters';

/**
 * Delivery counters in Redis when the processes share their state (every auction process, and the
 * reporting app's delivery answer, see one count), else in this process's memory.
 */
export function deliveryCountersFor(settings: {
  REDIS_URL?: string;
  REDIS_KEY_PREFIX: string;
}): DeliveryCounters {
  return settings.REDIS_URL
    ? new RedisDeliveryCounters({
        url: settings.REDIS_URL,
        keyPrefix: `${settings.REDIS_KEY_PREFIX}booking:`,
      })
    : new MemoryDeliveryCounters();
}
