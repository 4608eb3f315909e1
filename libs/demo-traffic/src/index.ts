export * from './random';
export * from './demo-traffic.generator';
export * from './demo-traffic.seeder';
export * from './ad-tag.driver';
