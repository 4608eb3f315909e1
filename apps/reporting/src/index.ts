export * from './reporting.module';
export * from './reporting.config';
export * from './reporting.tokens';
export { ReportRendererService } from './render/report-renderer.service';
export { BUILDER_MODULES } from './builder/report-builder.controller';
