export * from './client-address';
export * from './device.resolver';
export * from './geo.resolver';
