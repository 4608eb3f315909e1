import { Controller, Get, Header, Inject, Param, Query } from '@nestjs/common';
import type { Catalog } from '@app/catalog';
import type { AuctionConfig } from '../auction.config';
import { AuctionErrorCode, AuctionException } from '../auction.exception';
import { AUCTION_CONFIG, CATALOG } from '../auction.tokens';
import { renderCreativeSvg } from './creative-image.renderer';
import { newsletterPage } from './newsletter.page';

/**
 * What a person can look at: a demo newsletter that embeds ad tags as a publisher would, and the
 * images of catalog creatives that have no `imageUrl` of their own.
 */
@Controller()
export class DemoController {
  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    @Inject(CATALOG) private readonly catalog: Catalog,
  ) {}

  @Get('demo/newsletter')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  newsletter(@Query('recipient') recipient?: string): string {
    const reader =
      typeof recipient === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(recipient) ? recipient : undefined;
    return newsletterPage(this.catalog, this.config.AUCTION_PUBLIC_URL, reader ?? 'demo-reader-0001');
  }

  @Get('creatives/:file')
  @Header('Content-Type', 'image/svg+xml')
  @Header('Cache-Control', 'public, max-age=86400')
  creative(@Param('file') file: string): string {
    const creative = file.endsWith('.svg') ? this.catalog.creatives.get(file.slice(0, -4)) : undefined;
    if (!creative) throw new AuctionException(AuctionErrorCode.NotFound, 'no creative with that id');
    const { advertiser, campaign } = this.catalog.creativeLineage(creative.id);
    return renderCreativeSvg({
      size: creative.size,
      headline: advertiser?.name ?? creative.name,
      subline: campaign?.name ?? '',
      label: creative.name,
    });
  }

  @Get()
  info(): Record<string, unknown> {
    return {
      service: 'auction',
      endpoints: {
        adImage: 'GET /img/:adSlotId?placement=&list=&recipient=&email_domain=&kv=key:value&age=&gender=&cb=',
        adClick: 'GET /click/:adSlotId (same query)',
        conversion: 'GET /conv/:advertiserId?recipient=&order=',
        demo: 'GET /demo/newsletter',
      },
    };
  }
}
