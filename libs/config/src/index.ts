export * from './config.loader';
export * from './shared-settings';
