import { Type } from 'class-transformer';
import {
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
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

export const CAMPAIGN_TYPES = ['newsletter', 'roadblock', 'takeover', 'dedicated', 'display'] as const;
export const DEMAND_TYPES = ['direct', 'house', 'exchange', 'fallback_ads'] as const;
export type CampaignType = (typeof CAMPAIGN_TYPES)[number];
export type DemandType = (typeof DEMAND_TYPES)[number];

/** Ids are short, printable and safe in URLs and logs. */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const DOMAIN_PATTERN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;
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

  /** The private token of part 5: a secret, compared in constant time and never logged. */
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
}

export class TemplateRecord extends Entity {
  @Matches(ID_PATTERN)
  publisherId!: string;
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
}

export class AdvertiserRecord extends Entity {
  @Matches(ID_PATTERN)
  accountId!: string;

  @Matches(DOMAIN_PATTERN)
  domain!: string;
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
}

export class StrategyRecord extends Entity {
  @Matches(ID_PATTERN)
  campaignId!: string;

  /** Price paid per thousand impressions, in micro-USD. */
  @IsNumber()
  @Min(0)
  cpmMicros!: number;
}

export class CreativeRecord extends Entity {
  @Matches(ID_PATTERN)
  strategyId!: string;

  @Matches(SIZE_PATTERN)
  size!: string;

  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  landingUrl!: string;
}

export class DspRecord extends Entity {
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  endpoint!: string;

  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  syncUrl?: string;
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
