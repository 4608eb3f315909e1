import {
  Controller,
  Get,
  Header,
  HttpCode,
  Inject,
  Module,
  Res,
  ServiceUnavailableException,
  type DynamicModule,
} from '@nestjs/common';
import {
  HealthCheck,
  HealthCheckService,
  HealthIndicatorService,
  TerminusModule,
  type HealthCheckResult,
} from '@nestjs/terminus';
import type { Response } from 'express';
import { register } from 'prom-client';
import { exposedMetrics } from './cluster-metrics';

export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

/** A named dependency check: resolves when healthy, rejects with the reason otherwise. */
export type HealthChecks = Readonly<Record<string, () => Promise<void>>>;

/** A check that has not answered by then is down: a health endpoint must answer. */
export const HEALTH_CHECK_TIMEOUT_MS = 3_000;

/**
 * `/health` through Terminus: 200 with `{"status":"ok","info":{…},"error":{},"details":{…}}`
 * when every check is up, 503 with `"status":"error"` and each failing check's message under
 * `error` otherwise. The body is written here, so that an app's exception filter never reshapes it.
 */
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH_CHECKS) private readonly checks: HealthChecks,
  ) {}

  @Get('health')
  @HealthCheck()
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthCheckResult> {
    const indicators = Object.entries(this.checks).map(
      ([name, check]) =>
        () =>
          this.indicators
            .check(name)
            .attempt(() => check())
            .withTimeout(HEALTH_CHECK_TIMEOUT_MS),
    );
    try {
      return await this.health.check(indicators);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) {
        throw error;
      }
      res.status(503);
      return error.getResponse() as HealthCheckResult;
    }
  }
}

@Controller()
export class MetricsController {
  @Get('metrics')
  @HttpCode(200)
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return exposedMetrics();
  }
}

/** `/health` (Terminus) and `/metrics` (Prometheus) for an app. */
@Module({})
export class ObservabilityModule {
  static forRoot(checks: HealthChecks): DynamicModule {
    return {
      module: ObservabilityModule,
      imports: [TerminusModule.forRoot({ errorLogStyle: 'json' })],
      controllers: [HealthController, MetricsController],
      providers: [{ provide: HEALTH_CHECKS, useValue: checks }],
    };
  }
}
