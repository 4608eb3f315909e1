import { Controller, Get, Header, HttpCode, Inject, Module, Res, type DynamicModule } from '@nestjs/common';
import type { Response } from 'express';
import { register } from 'prom-client';

export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');

/** A named dependency check: resolves when healthy, rejects with the reason otherwise. */
export type HealthChecks = Readonly<Record<string, () => Promise<void>>>;

@Controller()
export class HealthController {
  constructor(@Inject(HEALTH_CHECKS) private readonly checks: HealthChecks) {}

  @Get('health')
  async health(@Res() res: Response): Promise<void> {
    const results: Record<string, string> = {};
    let healthy = true;
    for (const [name, check] of Object.entries(this.checks)) {
      try {
        await check();
        results[name] = 'ok';
      } catch (error) {
        healthy = false;
        results[name] = `failing: ${(error as Error).message}`;
      }
    }
    res.status(healthy ? 200 : 503).json({ status: healthy ? 'ok' : 'failing', checks: results });
  }
}

@Controller()
export class MetricsController {
  @Get('metrics')
  @HttpCode(200)
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}

/** `/health` and `/metrics` (Prometheus) for an app. */
@Module({})
export class ObservabilityModule {
  static forRoot(checks: HealthChecks): DynamicModule {
    return {
      module: ObservabilityModule,
      controllers: [HealthController, MetricsController],
      providers: [{ provide: HEALTH_CHECKS, useValue: checks }],
    };
  }
}
