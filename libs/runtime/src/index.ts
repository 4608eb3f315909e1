export * from './http-app.bootstrap';
export * from './embedded-adapters';
export * from './generic-exception.filter';
