export * from './native.types';
export * from './native-request.builder';
export * from './native-request.validator';
export * from './native-response.validator';
