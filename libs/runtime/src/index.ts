export * from './http-app.bootstrap';
export * from './embedded-adapters';
