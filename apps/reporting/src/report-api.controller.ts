import { All, Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Readable, pipeline } from 'node:stream';
import { ReportCode } from '@app/report-model';
import { reportDuration, reportRequests } from '@app/observability';
import { ReportRendererService, layoutFor } from './render/report-renderer.service';
import { ReportService } from './report/report.service';
import { ReportingException } from './reporting.exception';
import { REQUEST_FORMAT_LOCAL } from './reporting-exception.filter';
import { CLOCK, REPORTING_CONFIG, type Clock } from './reporting.tokens';
import type { ReportingConfig } from './reporting.config';
import { readBody } from './request/body-reader';
import { removedColumnsHeader } from './request/header-value';
import { negotiateResponseFormat } from './request/media-type';
import { RequestDecoderService } from './request/request-decoder.service';

/** `POST /api`: decode, run, render. Everything else lives in the services. */
@Controller()
export class ReportApiController {
  constructor(
    private readonly decoder: RequestDecoderService,
    private readonly reports: ReportService,
    private readonly renderer: ReportRendererService,
    @Inject(REPORTING_CONFIG) private readonly config: ReportingConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post('api')
  async report(@Req() req: Request, @Res() res: Response): Promise<void> {
    const stopTimer = reportDuration.startTimer();
    const raw = await readBody(req, this.config.MAX_BODY_BYTES);
    const decoded = this.decoder.decode(raw, req.headers['content-type']);
    res.locals[REQUEST_FORMAT_LOCAL] = decoded.format;
    const outcome = await this.reports.run(decoded.body, this.clock());
    const format = negotiateResponseFormat(req.headers.accept, decoded.format);
    const layout = layoutFor(format, outcome.plan.columnNames, outcome.plan.columnTotals);
    const rendered = this.renderer.render(outcome.report, format, layout);
    res.status(200).set({
      'Content-Type': rendered.contentType,
      'X-Report-Code': String(outcome.code),
      'X-Report-Exactness': outcome.plan.tier,
    });
    if (outcome.plan.removedColumns.length > 0) {
      res.set('X-Report-Removed', removedColumnsHeader(outcome.plan.removedColumns));
    }
    if (format === 'xlsx') {
      res.set('Content-Disposition', 'attachment; filename="report.xlsx"');
    }
    reportRequests.inc({ code: String(outcome.code) });
    stopTimer();
    // A failure mid-stream (logged by the renderer) destroys the response: the client sees a cut-off body.
    if (rendered.body instanceof Readable) {
      pipeline(rendered.body, res, () => undefined);
    } else {
      res.send(rendered.body);
    }
  }

  @All('api')
  otherMethod(@Res() res: Response): never {
    res.set('Allow', 'POST');
    throw new ReportingException(ReportCode.InvalidInput, 'use POST', {}, 405);
  }
}
