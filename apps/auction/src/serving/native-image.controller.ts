import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AuctionErrorCode, AuctionException } from '../auction.exception';
import { NativeCreativeService } from './native-creative.service';

const KEY = /^[A-Za-z0-9_-]{1,160}$/;

/** The flattened native ads, by creative key. */
@Controller()
export class NativeImageController {
  constructor(private readonly natives: NativeCreativeService) {}

  @Get('native/:file')
  async image(@Param('file') file: string, @Res() res: Response): Promise<void> {
    const key = file.endsWith('.png') ? file.slice(0, -4) : '';
    const png = KEY.test(key) ? await this.natives.png(key) : undefined;
    if (!png) {
      throw new AuctionException(AuctionErrorCode.NotFound, 'no native ad with that key');
    }
    // The image of a creative never changes under its key (the key hashes what it shows).
    res.status(200).type('image/png').setHeader('Cache-Control', 'public, max-age=86400, immutable');
    res.send(png);
  }
}
