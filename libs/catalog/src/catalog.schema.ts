import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { BookingRecord } from './booking.schema';

export const CAMPAIGN_TYPES = ['newsletter', 'roadblock', 'takeover', 'dedicated', 'display'] as const;
/** How a seller sells on the exchange, as IAB sellers.json 1.0 names it. */
export const SELLER_TYPES = ['PUBLISHER', 'INTERMEDIARY', 'BOTH'] as const;
export type SellerType = (typeof SELLER_TYPES)[number];
/** The OpenRTB versions a DSP can be spoken to in; 2.5 when its entry names none. */
export const DSP_OPENRTB_VERSIONS = ['2.5', '2.6'] as const;
export const DEMAND_TYPES = ['direct', 'house', 'exchange', 'fallback_ads'] as const;
export type CampaignType = (typeof CAMPAIGN_TYPES)[number];
export type DemandType = (typeof DEMAND_TYPES)[number];

/** Ids are short, printable and safe in URLs and logs. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const DOMAIN_PATTERN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;
/** IAB content categories as OpenRTB writes them (`IAB1`, `IAB7-39`). */
const IAB_CATEGORY_PATTERN = /^IAB\d{1,2}(-\d{1,3})?$/;
const URL_OPTIONS = { require_tld: false, protocols: ['http', 'https'], require_protocol: true };
const SIZE_PATTERN = /^\d{1,4}x\d{1,4}$/;

class Entity {
  @Matches(ID_PATTERN)
  id!: string;

  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;
}

export class AccountRecord extends Entity {
  @IsIn(['publisher', 'media_group'])
  kind!: 'publisher' | 'media_group';

  @IsIn(['active', 'suspended'])
  status!: 'active' | 'suspended';
}

export class UserRecord {
  @Matches(ID_PATTERN)
  id!: string;

  @Matches(ID_PATTERN)
  accountId!: string;

  /**
   * The private token of reporting part 5 (docs/specification-notes.md#reporting-part-5): a secret, compared
   * in constant time and never logged.
   */
  @IsString()
  @MinLength(8)
  @MaxLength(200)
  token!: string;

  @IsIn(['full', 'advertiser_only'])
  variant!: 'full' | 'advertiser_only';

  @IsIn(['active', 'disabled'])
  status!: 'active' | 'disabled';

  @IsBoolean()
  apiAccess!: boolean;
}

/**
 * A publisher's privacy signals where its ad tags say nothing (docs/dsp-integration.md#privacy):
 * the tag's `gdpr`, `us_privacy`, `gpp` and `gpp_sid` override them one by one.
 */
export class PrivacyDefaultsRecord {
  /** 1: GDPR applies to the publisher's readers (an EU publisher); 0: it does not. */
  @IsOptional()
  @IsIn([0, 1])
  gdpr?: 0 | 1;

  /** The IAB US Privacy string, e.g. `1YNN`. */
  @IsOptional()
  @Matches(/^1[YN-]{3}$/)
  usPrivacy?: string;

  /** An IAB GPP string. */
  @IsOptional()
  @MaxLength(4096)
  @Matches(/^[A-Za-z0-9_.-]+(~[A-Za-z0-9_.-]*)*$/)
  gpp?: string;

  /** The GPP section ids that apply. */
  @IsOptional()
  @ArrayMaxSize(32)
  @IsInt({ each: true })
  @Min(0, { each: true })
  @Max(65535, { each: true })
  gppSid?: number[];
}

export class PublisherRecord extends Entity {
  @Matches(ID_PATTERN)
  accountId!: string;

  @Matches(DOMAIN_PATTERN)
  domain!: string;

  /** The exchange's share of spend; the publisher's revenue is spend times (1 - share). */
  @IsNumber()
  @Min(0)
  @Max(1)
  exchangeShare!: number;

  /** Auction type of the publisher's RTB auctions (`at`): 1 first price, 2 second price. */
  @IsOptional()
  @IsIn([1, 2])
  auctionType?: 1 | 2;

  /** Content categories of the publisher's newsletters (`site.cat`, `site.publisher.cat`). */
  @IsOptional()
  @ArrayMaxSize(50)
  @Matches(IAB_CATEGORY_PATTERN, { each: true })
  cat?: string[];

  /** Creative categories the publisher refuses (`bcat`). */
  @IsOptional()
  @ArrayMaxSize(200)
  @Matches(IAB_CATEGORY_PATTERN, { each: true })
  bcat?: string[];

  /** Advertiser domains the publisher refuses (`badv`); subdomains are refused too. */
  @IsOptional()
  @ArrayMaxSize(500)
  @Matches(DOMAIN_PATTERN, { each: true })
  badv?: string[];

  /**
   * The publisher's `seller_id` in our sellers.json, its `sid` in the supply chain and the id in
   * its ads.txt line; the publisher's id when absent. Unique across publishers.
   */
  @IsOptional()
  @Matches(ID_PATTERN)
  sellerId?: string;

  /**
   * `PUBLISHER` (the default): it owns the inventory it sells; `INTERMEDIARY`: it resells another's
   * (its supply chain is then incomplete); `BOTH`.
   */
  @IsOptional()
  @IsIn(SELLER_TYPES)
  sellerType?: SellerType;

  /** Its sellers.json entry hides its name and domain (`is_confidential` 1). */
  @IsOptional()
  @IsBoolean()
  confidential?: boolean;

  /** Its newsletters are directed to children: every bid request says COPPA (`regs.coppa` 1). */
  @IsOptional()
  @IsBoolean()
  coppa?: boolean;

  @IsOptional()
  @ValidateNested()
  @Type(() => PrivacyDefaultsRecord)
  privacy?: PrivacyDefaultsRecord;
  /** IANA time zone of the publisher's readers' day (flights, daily goals, caps); UTC when absent. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timeZone?: string;
}

export class TemplateRecord extends Entity {
  @Matches(ID_PATTERN)
  publisherId!: string;
}

/** A private-marketplace deal offered on an ad slot (`imp.pmp.deals`). */
export class DealRecord {
  @Matches(ID_PATTERN)
  id!: string;

  /** Deal floor in micro-USD per thousand impressions. */
  @IsInt()
  @Min(0)
  floorCpmMicros!: number;

  /** Seats allowed to buy the deal; absent means any seat. */
  @IsOptional()
  @ArrayMaxSize(50)
  @Matches(ID_PATTERN, { each: true })
  wseat?: string[];
}

export class AdSlotRecord extends Entity {
  @Matches(ID_PATTERN)
  templateId!: string;

  @Matches(SIZE_PATTERN)
  size!: string;

  /** Floor price of the slot in micro-USD per thousand impressions. */
  @IsNumber()
  @Min(0)
  floorCpmMicros!: number;

  /**
   * `native` slots ask DSPs for Native 1.1 ads (flattened into one image of the slot's size);
   * `banner` (the default) for banners.
   */
  @IsOptional()
  @IsIn(['banner', 'native'])
  format?: 'banner' | 'native';

  /** OpenRTB ad position (`banner.pos`): 1 above the fold, 3 below, 0 unknown. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(7)
  pos?: number;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => DealRecord)
  deals?: DealRecord[];

  /** Only bids on the slot's deals are accepted (`pmp.private_auction` = 1). */
  @IsOptional()
  @IsBoolean()
  privateAuction?: boolean;
}

export class AdvertiserRecord extends Entity {
  @Matches(ID_PATTERN)
  accountId!: string;

  @Matches(DOMAIN_PATTERN)
  domain!: string;

  /** Conversion window after the last click (post-click attribution), in hours. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(24 * 90)
  postClickWindowHours?: number;

  /** Conversion window after the last view without a click (post-view attribution), in hours. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(24 * 90)
  postViewWindowHours?: number;
}

export class InsertionOrderRecord extends Entity {
  @Matches(ID_PATTERN)
  advertiserId!: string;
}

export class CampaignRecord extends Entity {
  @Matches(ID_PATTERN)
  insertionOrderId!: string;

  @IsIn(CAMPAIGN_TYPES)
  campaignType!: CampaignType;

  @IsIn(DEMAND_TYPES)
  demandType!: DemandType;
  /** Flight, goals, pacing, caps, targeting and priority shared by its strategies (docs/direct-campaigns.md). */
  @IsOptional()
  @ValidateNested()
  @Type(() => BookingRecord)
  booking?: BookingRecord;
}

export class StrategyRecord extends Entity {
  @Matches(ID_PATTERN)
  campaignId!: string;

  /** Price paid per thousand impressions, in micro-USD. */
  @IsNumber()
  @Min(0)
  cpmMicros!: number;
  /** The strategy's own flight, goals, pacing, caps and targeting, within its campaign's. */
  @IsOptional()
  @ValidateNested()
  @Type(() => BookingRecord)
  booking?: BookingRecord;
}

export class CreativeRecord extends Entity {
  @Matches(ID_PATTERN)
  strategyId!: string;

  @Matches(SIZE_PATTERN)
  size!: string;

  @IsUrl(URL_OPTIONS)
  landingUrl!: string;

  /** The ad image; absent means the image the exchange draws and hosts for the creative. */
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  imageUrl?: string;
}

/**
 * A buyer seat of a DSP. Its wins are booked on a strategy of an `exchange` campaign of the
 * catalog, so that RTB spend lands on an advertiser, insertion order and campaign in the reports.
 */
export class DspSeatRecord {
  @Matches(ID_PATTERN)
  id!: string;

  @Matches(ID_PATTERN)
  strategyId!: string;
}

export class DspRecord extends Entity {
  @IsUrl(URL_OPTIONS)
  endpoint!: string;

  /**
   * The DSP's user sync endpoint (bidding part 4.3, docs/specification-notes.md#bidding-part-4-3); absent
   * means the DSP does not sync.
   */
  @IsOptional()
  @IsUrl(URL_OPTIONS)
  syncUrl?: string;

  /**
   * The DSP's advertiser id assigned by the exchange: the path of its sync callback `/s/<dspAdvertiserId>`
   * (bidding part 4.4, docs/specification-notes.md#bidding-part-4-4). The DSP's own id when absent.
   */
  @IsOptional()
  @Matches(ID_PATTERN)
  dspAdvertiserId?: string;

  /**
   * How the native request goes into `imp.native.request`: the JSON object itself, as the
   * specification says (the default), or a JSON string, as OpenRTB 2.5 and most bidders expect.
   */
  @IsOptional()
  @IsIn(['object', 'string'])
  nativeRequestForm?: 'object' | 'string';

  /**
   * The DSP bids only on users it has matched: others get no bid request (bidding part 4.4, rule 4:
   * docs/specification-notes.md#bidding-part-4-4).
   */
  @IsOptional()
  @IsBoolean()
  matchedUsersOnly?: boolean;

  /** Seats the DSP bids with; the first is used for a bid without `seatbid.seat`. */
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => DspSeatRecord)
  seats!: DspSeatRecord[];

  /**
   * Bid requests a second the DSP takes at most; past it an auction does not ask it, and counts
   * the request as throttled (`adx_dsp_throttled_total`). Each auction worker takes its share.
   * Absent: no cap.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  maxQps?: number;

  /** The DSP's own answer budget, in ms; the exchange never waits past the auction's `tmax`. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  timeoutMs?: number;

  /** A paused DSP gets no bid requests. */
  @IsOptional()
  @IsBoolean()
  paused?: boolean;

  /**
   * The DSP wants loss notices: each of its bids that loses or is rejected has its `lurl` called,
   * with the loss reason code (docs/dsp-integration.md#notices).
   */
  @IsOptional()
  @IsBoolean()
  lossNotices?: boolean;

  /**
   * The DSP's vendor id in the IAB Global Vendor List: where GDPR applies, only a TCF consent to
   * this vendor (purpose 1) lets its bid requests carry user ids and its sync run. Absent: none.
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  gvlVendorId?: number;

  /**
   * `2.6` sends the DSP OpenRTB 2.6 (`x-openrtb-version: 2.6`, the fields 2.6 moved out of `ext`);
   * `2.5`, the default, 2.5.
   */
  @IsOptional()
  @IsIn(DSP_OPENRTB_VERSIONS)
  openrtbVersion?: (typeof DSP_OPENRTB_VERSIONS)[number];
}

export class CatalogDocument {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AccountRecord)
  accounts!: AccountRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => UserRecord)
  users!: UserRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PublisherRecord)
  publishers!: PublisherRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => TemplateRecord)
  templates!: TemplateRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AdSlotRecord)
  adSlots!: AdSlotRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => AdvertiserRecord)
  advertisers!: AdvertiserRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => InsertionOrderRecord)
  insertionOrders!: InsertionOrderRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CampaignRecord)
  campaigns!: CampaignRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => StrategyRecord)
  strategies!: StrategyRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => CreativeRecord)
  creatives!: CreativeRecord[];

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => DspRecord)
  dsps!: DspRecord[];

  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsString({ each: true })
  notes?: string[];
}
