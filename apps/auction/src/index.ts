export * from './auction.module';
export * from './auction.config';
