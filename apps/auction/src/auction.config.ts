import { IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { BaseSettings } from '@app/config';

/** The auction app's configuration, read from the environment (see the README). */
export class AuctionConfig extends BaseSettings {
  @IsString()
  @MinLength(1)
  AUCTION_HOST = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  AUCTION_PORT = 8080;
}
