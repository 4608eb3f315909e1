export * from './http-app.bootstrap';
export * from './adapter.factory';
export * from './generic-exception.filter';
export * from './catalog-reload';
