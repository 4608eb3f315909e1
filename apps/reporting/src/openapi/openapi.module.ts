import { Module, type DynamicModule } from '@nestjs/common';
import { OpenApiController } from './openapi.controller';
import { buildOpenApiDocument } from './openapi.document';
import { OPENAPI_DOCUMENT, type OpenApiModuleOptions } from './openapi.options';

/**
 * The API description of the reporting app, built once at start from the catalogues. Imported by
 * `ReportingModule` with the dependencies it receives: `OpenApiModule.forRoot(deps)`.
 */
@Module({})
export class OpenApiModule {
  static forRoot(options: OpenApiModuleOptions): DynamicModule {
    const document = buildOpenApiDocument({
      seedWindowSeconds: options.config.SEED_WINDOW_SECONDS,
      requestsPerSecond: options.config.RATE_LIMIT_PER_SECOND,
      maxBodyBytes: options.config.MAX_BODY_BYTES,
    });
    return {
      module: OpenApiModule,
      controllers: [OpenApiController],
      providers: [{ provide: OPENAPI_DOCUMENT, useValue: document }],
    };
  }
}
