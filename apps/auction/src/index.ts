export * from './auction.module';
export * from './auction.config';
export * from './auction.tokens';
export { EventPublisher } from './serving/event.publisher';
export { TrackerDispatcher } from './tracking/tracker.dispatcher';
export { adTag } from './demo/newsletter.page';
