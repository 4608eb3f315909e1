import { InProcessEventBus } from '@app/events';
import { eventBusContract } from './event-bus.contract';

eventBusContract(
  'in-process',
  async () => new InProcessEventBus({ lingerMs: 5, retryDelayMs: 10, maxBatchSize: 100 }),
);
