export * from './openapi.module';
export * from './openapi.options';
export * from './openapi.document';
