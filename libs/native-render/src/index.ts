export * from './image-header.parser';
export * from './native-ad.cache';
export * from './native-ad.layout';
export * from './native-ad.renderer';
export * from './native-fonts';
export * from './native-image.fetcher';
export * from './text.layout';
