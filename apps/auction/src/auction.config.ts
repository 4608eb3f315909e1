import { availableParallelism } from 'node:os';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { BaseSettings, Secret } from '@app/config';

/** Workers share decisions, first views and syncs only through a shared state store. */
@ValidatorConstraint({ name: 'workersNeedSharedState' })
class WorkersNeedSharedState implements ValidatorConstraintInterface {
  validate(workers: number, args: ValidationArguments): boolean {
    return workers <= 1 || Boolean((args.object as AuctionConfig).REDIS_URL);
  }

  defaultMessage(): string {
    return 'AUCTION_WORKERS above 1 needs REDIS_URL: each worker would keep decisions of its own';
  }
}

/** The auction app's configuration, read from the environment (docs/operations.md#configuration). */
export class AuctionConfig extends BaseSettings {
  @IsString()
  @MinLength(1)
  AUCTION_HOST = '127.0.0.1';

  @IsInt()
  @Min(0)
  @Max(65535)
  AUCTION_PORT = 8080;

  /**
   * The exchange's origin as readers and DSPs reach it (hosted creative images, the demo's tags);
   * unset, the address the app listens on.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#]+$/, { message: 'AUCTION_PUBLIC_URL must be an http(s) origin' })
  AUCTION_PUBLIC_URL?: string = undefined;

  /** The auction's answer budget (`tmax`): no DSP answer is waited for past it. */
  @IsInt()
  @Min(10)
  @Max(1000)
  AUCTION_TMAX_MS = 150;

  /** How long a decision is kept, so that a reopen shows the same ad and a click finds it. */
  @IsInt()
  @Min(1)
  @Max(24 * 365)
  DECISION_TTL_HOURS = 24 * 30;

  /** Key of the HMAC that turns a publisher's recipient hash into our user id. */
  @Secret()
  @IsString()
  @MinLength(16)
  USER_ID_SECRET = 'dev-only-user-id-secret-change-me';

  /** Reverse proxies in front of the app whose `X-Forwarded-For` entries are trusted. */
  @IsInt()
  @Min(0)
  @Max(5)
  TRUSTED_PROXY_HOPS = 0;

  /** Budget of a server-to-server tracker or win notice call. */
  @IsInt()
  @Min(100)
  @Max(30_000)
  TRACKER_TIMEOUT_MS = 2000;

  /** Tracker and win notice calls in flight at once; beyond it they are dropped and counted. */
  @IsInt()
  @Min(1)
  @Max(10_000)
  TRACKER_MAX_IN_FLIGHT = 512;

  /** Largest DSP answer read; a longer one is cut off and is no bid. */
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  BID_RESPONSE_MAX_BYTES = 256 * 1024;

  /**
   * 1 lets the URLs DSPs give us (win, billing and loss notices, trackers, native images) be called
   * on private and loopback addresses (local runs, tests, whose DSPs listen on loopback); 0 (the
   * default) refuses them, so that a DSP cannot make the exchange call inside its network. The one
   * setting of the one guard (`@app/url-guard`).
   */
  @IsIn([0, 1])
  DSP_URL_ALLOW_PRIVATE: 0 | 1 = 0;

  /**
   * The exchange's own domain: the `asi` of its supply chain node, where its sellers.json is served
   * (`https://<domain>/sellers.json`) and the first field of a publisher's ads.txt line.
   */
  @Matches(/^(?=.{3,253}$)[a-z0-9-]+(\.[a-z0-9-]+)+$/, {
    message: 'EXCHANGE_DOMAIN must be a lower-case domain',
  })
  EXCHANGE_DOMAIN = 'email-adx.example';

  /** The contact e-mail of sellers.json; left out when unset. */
  @IsOptional()
  @Matches(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: 'SELLERS_CONTACT_EMAIL must be an e-mail address' })
  SELLERS_CONTACT_EMAIL?: string = undefined;

  /** The contact address of sellers.json; left out when unset. */
  @IsOptional()
  @IsString()
  @MinLength(1)
  SELLERS_CONTACT_ADDRESS?: string = undefined;

  /** Budget of fetching a native ad's main image to flatten it, ms. */
  @IsInt()
  @Min(100)
  @Max(10_000)
  NATIVE_IMAGE_TIMEOUT_MS = 1500;

  /** Connections kept open to each DSP (undici keep-alive pool). */
  @IsInt()
  @Min(1)
  @Max(1024)
  DSP_CONNECTIONS = 64;

  /** One successful ad tag request in this many gets an access log line (0: none); failures always do. */
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  AD_TAG_LOG_EVERY = 1000;

  /**
   * Event loop lag, ms, past which the limit on auctions in flight is cut while the loop is
   * saturated (new ones past it are shed to direct, house and fallback demand, no RTB); a request
   * that waited longer than this before its auction could begin on a saturated loop is shed too;
   * 0 turns shedding off. Keep it well under tmax: the lag delays the reading of every DSP answer.
   */
  @IsInt()
  @Min(0)
  @Max(1000)
  AUCTION_SHED_LAG_MS = 5;

  /**
   * Time, ms, over which the loop's busy share is averaged to tell saturation (busy 90 % of the
   * time) from bursts that pass by themselves.
   */
  @IsInt()
  @Min(10)
  @Max(10_000)
  AUCTION_SHED_INTERVAL_MS = 100;

  /** Auctions waiting for DSPs at once past which a new one is shed whatever the lag (the limit's ceiling). */
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  AUCTION_MAX_IN_FLIGHT = 1000;

  /** Share of a DSP's recent calls that time out or fail past which it gets reduced traffic. */
  @IsNumber()
  @Min(0)
  @Max(1)
  DSP_UNHEALTHY_FAILURE_SHARE = 0.5;

  /** Share of the bid requests an unhealthy DSP still gets, so that its recovery shows. */
  @IsNumber()
  @Min(0.01)
  @Max(1)
  DSP_UNHEALTHY_TRAFFIC_SHARE = 0.1;

  /**
   * Processes serving the auction, each with its own event loop, sharing the port (`node:cluster`)
   * and their state through Redis. 0: one per core when REDIS_URL is set, else one.
   */
  @IsInt()
  @Min(0)
  @Max(256)
  @Validate(WorkersNeedSharedState)
  AUCTION_WORKERS = 0;
}

/** How many auction processes to run: `AUCTION_WORKERS`, or its default. */
export function auctionWorkers(config: AuctionConfig): number {
  if (config.AUCTION_WORKERS > 0) {
    return config.AUCTION_WORKERS;
  }
  return config.REDIS_URL ? availableParallelism() : 1;
}
