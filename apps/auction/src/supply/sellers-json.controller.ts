import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { buildSellersJson, type Catalog, type CatalogSource } from '@app/catalog';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG, CATALOG } from '../auction.tokens';

/**
 * `GET /sellers.json` (IAB sellers.json 1.0, docs/dsp-integration.md#sellersjson): the sellers of
 * the catalog, for buyers that check the `sid` of our supply chain node and the seller id of a
 * publisher's ads.txt line. Built once per catalog: again after a reload.
 */
@Controller()
export class SellersJsonController {
  private built?: { catalog: Catalog; body: string };

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
  ) {}

  private body(): string {
    const catalog = this.catalogs.current;
    if (this.built?.catalog !== catalog) {
      const body = JSON.stringify(
        buildSellersJson(catalog, {
          contactEmail: this.config.SELLERS_CONTACT_EMAIL,
          contactAddress: this.config.SELLERS_CONTACT_ADDRESS,
        }),
      );
      this.built = { catalog, body };
    }
    return this.built.body;
  }

  @Get('sellers.json')
  serve(@Res() res: Response): void {
    res
      .status(200)
      .set({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=3600' })
      .send(this.body());
  }
}
