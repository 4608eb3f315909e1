import { MemoryStateStore } from '@app/state-store';
import { stateStoreContract } from './state-store.contract';

stateStoreContract('memory', async () => new MemoryStateStore());
