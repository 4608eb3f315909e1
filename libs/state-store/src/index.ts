export * from './state-store.port';
export * from './memory-state-store';
export * from './redis-state-store';
