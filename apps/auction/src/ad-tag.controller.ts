import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { sendPixel, sendRedirect } from './serving/ad-answer';
import { AdServingService, type AdAnswer } from './serving/ad-serving.service';
import { ConversionService } from './serving/conversion.service';
import { EventPublisher } from './serving/event.publisher';

/** The ad tag of a newsletter (`/img`, `/click`) and the advertiser's conversion pixel (`/conv`). */
@Controller()
export class AdTagController {
  constructor(
    private readonly serving: AdServingService,
    private readonly conversions: ConversionService,
    private readonly events: EventPublisher,
  ) {}

  @Get('img/:adSlotId')
  async image(@Param('adSlotId') adSlotId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const started = performance.now();
    const answer = await this.events.track(this.serving.image(adSlotId, req));
    withCookie(res, answer);
    // What the ad request cost us and what it waited for the DSPs, for clients and benchmarks.
    res.setHeader(
      'Server-Timing',
      `dsp;dur=${(answer.dspWaitMs ?? 0).toFixed(2)}, total;dur=${(performance.now() - started).toFixed(2)}`,
    );
    if (answer.location) {
      sendRedirect(res, answer.location);
    } else {
      sendPixel(res);
    }
  }

  @Get('click/:adSlotId')
  async click(@Param('adSlotId') adSlotId: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const answer = await this.events.track(this.serving.click(adSlotId, req));
    withCookie(res, answer);
    sendRedirect(res, answer.location!);
  }

  @Get('conv/:advertiserId')
  async conversion(
    @Param('advertiserId') advertiserId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { setCookie } = await this.events.track(this.conversions.convert(advertiserId, req));
    withCookie(res, { setCookie });
    sendPixel(res);
  }
}

function withCookie(res: Response, answer: AdAnswer): void {
  if (answer.setCookie) {
    res.setHeader('Set-Cookie', answer.setCookie);
  }
}
