export * from './openrtb.types';
export * from './price';
export * from './macro.substitution';
export * from './markup.extractor';
export * from './bid-response.validator';
export * from './native';
