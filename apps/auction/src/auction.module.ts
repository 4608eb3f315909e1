import { Controller, Get, Module, type DynamicModule } from '@nestjs/common';
import type { Catalog } from '@app/catalog';
import { APP_FILTER } from '@nestjs/core';
import { ObservabilityModule } from '@app/observability';
import { GenericExceptionFilter } from '@app/runtime';
import type { AuctionConfig } from './auction.config';

export interface AuctionDependencies {
  readonly config: AuctionConfig;
  readonly catalog: Catalog;
}

/** What the exchange serves today; the ad tag, OpenRTB and user sync come with their issue. */
@Controller()
class AuctionInfoController {
  @Get()
  info(): { service: string; status: string } {
    return { service: 'auction', status: 'the ad tag and OpenRTB endpoints are not built yet' };
  }
}

@Module({})
export class AuctionModule {
  static forRoot(deps: AuctionDependencies): DynamicModule {
    return {
      module: AuctionModule,
      imports: [ObservabilityModule.forRoot({ catalog: async () => void deps.catalog.users.size })],
      controllers: [AuctionInfoController],
      providers: [{ provide: APP_FILTER, useClass: GenericExceptionFilter }],
    };
  }
}
