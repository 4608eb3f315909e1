export * from './public-address';
export * from './dsp-url.guard';
