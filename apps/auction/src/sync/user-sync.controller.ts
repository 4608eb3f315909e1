import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { adRequests } from '@app/observability';
import { sendPixel, sendRedirect } from '../serving/ad-answer';
import { parseTagQuery, queryLength, type TagQuery } from '../serving/tag-query.parser';
import { ViewerResolver } from '../serving/viewer.resolver';
import { PublicOrigin } from '../public-origin.service';
import { privacyOf } from '../core/privacy-context';
import { privacyQuery, UserSyncService } from './user-sync.service';

/**
 * The sync pixel (`/sync`, bidding part 4.3: docs/specification-notes.md#bidding-part-4-3) and the DSPs'
 * callback (`/s/:dspAdvertiserId`, bidding part 4.4: docs/specification-notes.md#bidding-part-4-4). Each
 * answer is an image: a redirect along the chain of DSPs to sync, or the transparent pixel.
 */
@Controller()
export class UserSyncController {
  constructor(
    private readonly sync: UserSyncService,
    private readonly viewers: ViewerResolver,
    private readonly origin: PublicOrigin,
  ) {}

  @Get('sync')
  async pixel(@Req() req: Request, @Res() res: Response): Promise<void> {
    const { tag } = parseTagQuery(req.query as TagQuery, queryLength(req.originalUrl));
    const resolved = await this.viewers.resolve(req, tag);
    if (resolved.setCookie) {
      res.setHeader('Set-Cookie', resolved.setCookie);
    }
    const next = await this.sync.nextSyncUrl({
      exchangeUuid: resolved.knownCookie,
      recipientUserId: resolved.recipientUserId,
      consent: tag.consent,
      // The pixel names no publisher: only its own signals count.
      privacy: privacyOf(tag.privacy, undefined),
    });
    adRequests.inc({
      endpoint: 'sync',
      result: next ? 'redirect' : resolved.knownCookie ? 'done' : 'no_cookie',
    });
    if (next) {
      sendRedirect(res, next);
    } else {
      sendPixel(res);
    }
  }

  @Get('s/:dspAdvertiserId')
  async callback(
    @Param('dspAdvertiserId') dspAdvertiserId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const { knownCookie } = await this.viewers.resolve(req, { recipient: '' });
    const result = await this.sync.callback(dspAdvertiserId, req.query, knownCookie);
    if ('refused' in result) {
      adRequests.inc({ endpoint: 'sync_callback', result: result.refused });
      res.setHeader('X-Error-Code', result.refused);
      sendPixel(res, 400);
      return;
    }
    adRequests.inc({ endpoint: 'sync_callback', result: result.stored });
    // On along the chain, under the privacy signals it started with (the callback URL we gave the
    // DSP carries them; only they, checked, go on): the next DSP not yet asked, or the pixel.
    const { tag } = parseTagQuery(req.query as TagQuery, queryLength(req.originalUrl));
    const signals = privacyQuery(tag.privacy);
    sendRedirect(res, `${this.origin.value}/sync${signals ? `?${signals}` : ''}`);
  }
}
