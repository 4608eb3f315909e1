export * from './event.schema';
export * from './event-bus.port';
export * from './in-process-event-bus';
export * from './kafka-event-bus';
export * from './kafka-frame';
export * from './event-spool';
export * from './fnv1a';
export * from './kafka-consumer-fence';
