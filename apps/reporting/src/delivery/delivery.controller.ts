import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { REQUEST_FORMAT_LOCAL } from '../reporting-exception.filter';
import { CLOCK, REPORTING_CONFIG, type Clock } from '../reporting.tokens';
import type { ReportingConfig } from '../reporting.config';
import { readBody } from '../request/body-reader';
import { RequestDecoderService } from '../request/request-decoder.service';
import { DeliveryService } from './delivery.service';

/**
 * `POST /api/delivery`: each visible booking's delivery against its goals and pace, as JSON. The
 * body carries the credentials of `POST /api` (id, seed, hash) and nothing else.
 */
@Controller()
export class DeliveryController {
  constructor(
    private readonly decoder: RequestDecoderService,
    private readonly delivery: DeliveryService,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post('api/delivery')
  async answer(@Req() req: Request, @Res() res: Response): Promise<void> {
    const raw = await readBody(req, this.config.MAX_BODY_BYTES);
    const decoded = this.decoder.decode(raw, req.headers['content-type']);
    res.locals[REQUEST_FORMAT_LOCAL] = decoded.format;
    const answer = await this.delivery.run(decoded.body, this.clock());
    res.status(200).set('Cache-Control', 'no-store').json(answer);
  }
}
