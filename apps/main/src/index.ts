export * from './embedded-system';
