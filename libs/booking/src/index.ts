export * from './booking-verdict';
export * from './local-time';
export * from './booked-layer';
export * from './booking-desk';
export * from './delivery-counters.port';
export * from './memory-delivery-counters';
export * from './redis-delivery-counters';
