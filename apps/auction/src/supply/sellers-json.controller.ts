import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { buildSellersJson, type Catalog } from '@app/catalog';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG, CATALOG } from '../auction.tokens';

/**
 * `GET /sellers.json` (IAB sellers.json 1.0, docs/dsp-integration.md#sellersjson): the sellers of
 * the catalog, for buyers that check the `sid` of our supply chain node and the seller id of a
 * publisher's ads.txt line. Built once: a catalog does not change while the app runs.
 */
@Controller()
export class SellersJsonController {
  private readonly body: string;

  constructor(@Inject(AUCTION_CONFIG) config: AuctionConfig, @Inject(CATALOG) catalog: Catalog) {
    this.body = JSON.stringify(
      buildSellersJson(catalog, {
        contactEmail: config.SELLERS_CONTACT_EMAIL,
        contactAddress: config.SELLERS_CONTACT_ADDRESS,
      }),
    );
  }

  @Get('sellers.json')
  serve(@Res() res: Response): void {
    res
      .status(200)
      .set({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=3600' })
      .send(this.body);
  }
}
