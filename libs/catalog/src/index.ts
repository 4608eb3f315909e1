export * from './catalog.schema';
export * from './catalog';
export * from './catalog.loader';
export * from './catalog.exception';
export * from './sellers-json';
export * from './booking.schema';
export * from './booking.validation';
export * from './catalog.source';
