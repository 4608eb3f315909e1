import { Module, type DynamicModule } from '@nestjs/common';
import { ReportBuilderController } from './report-builder.controller';
import { REPORT_BUILDER_OPTIONS, type ReportBuilderOptions } from './report-builder.options';

/**
 * The report builder page of the reporting app. Imported by `ReportingModule` with the same
 * dependencies it receives: `ReportBuilderModule.forRoot(deps)`.
 */
@Module({})
export class ReportBuilderModule {
  static forRoot(options: ReportBuilderOptions): DynamicModule {
    return {
      module: ReportBuilderModule,
      controllers: [ReportBuilderController],
      providers: [{ provide: REPORT_BUILDER_OPTIONS, useValue: options }],
    };
  }
}
