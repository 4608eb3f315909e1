import { Controller, Get, Header, Inject, Param, Query } from '@nestjs/common';
import type { Catalog, CatalogSource } from '@app/catalog';
import { AuctionErrorCode, AuctionException } from '../auction.exception';
import { CATALOG, CLOCK, type Clock } from '../auction.tokens';
import { PublicOrigin } from '../public-origin.service';
import { renderCreativeSvg } from './creative-image.renderer';
import { DEMO_EDITIONS, newsletterPage, type DemoEdition } from './newsletter.page';

/**
 * What a person can look at: a demo newsletter that embeds ad tags as a publisher would, and the
 * images of catalog creatives that have no `imageUrl` of their own.
 */
@Controller()
export class DemoController {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly origin: PublicOrigin,
  ) {}

  @Get('demo/newsletter')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  newsletter(@Query('recipient') recipient?: string, @Query('edition') edition?: string): string {
    const reader =
      typeof recipient === 'string' && /^[A-Za-z0-9_-]{8,64}$/.test(recipient) ? recipient : undefined;
    const chosen: DemoEdition =
      typeof edition === 'string' && Object.hasOwn(DEMO_EDITIONS, edition)
        ? (edition as DemoEdition)
        : 'ledger';
    return newsletterPage(
      this.catalog,
      this.origin.value,
      reader ?? 'demo-reader-0001',
      this.clock(),
      chosen,
    );
  }

  @Get('creatives/:file')
  @Header('Content-Type', 'image/svg+xml')
  @Header('Cache-Control', 'public, max-age=86400')
  creative(@Param('file') file: string): string {
    const creative = file.endsWith('.svg') ? this.catalog.creatives.get(file.slice(0, -4)) : undefined;
    if (!creative) {
      throw new AuctionException(AuctionErrorCode.NotFound, 'no creative with that id');
    }
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
        demo: 'GET /demo/newsletter?edition=ledger|garden',
      },
    };
  }
}
