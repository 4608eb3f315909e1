/**
 * The meanings of the specification's fields (parts 2.3 and 2.5), for people reading the API
 * description and the report builder. Only words: which fields exist, their types, exactness and
 * report types come from the catalogues of `@app/report-model`; a field missing here is still
 * listed, just without a sentence.
 */
export const FIELD_DESCRIPTIONS: Readonly<Record<string, string>> = {
  // Metrics, reporting part 2.3 (docs/specification-notes.md#reporting-part-2-3).
  impressions: 'Total ad impressions and views: unique impressions plus reopens (shares included).',
  unique_impressions: 'Ad views for the first time; excludes reopens and shares.',
  reopens: 'Later ad views after the email was first opened; includes shares and forwards.',
  clicks: 'Clicks the ad received.',
  conversions: 'Conversions logged after an ad click.',
  post_view_conversions: 'Conversions logged after a view without a click.',
  ctr: 'Clickthrough rate: percentage of impressions that received clicks.',
  ccr: 'Click-to-conversion ratio: percentage of clicks that converted.',
  revenue: 'Total net revenue, in USD.',
  net_cpm: 'Net cost per thousand impressions, in USD.',
  net_cpc: 'Net cost per click, in USD.',
  net_cpa: 'Net cost per acquisition, in USD.',
  spend: 'Total spend of an ad campaign, in USD.',
  gross_cpm: 'Gross cost per thousand impressions, in USD.',
  gross_cpc: 'Gross cost per click, in USD.',
  gross_cpa: 'Gross cost per acquisition, in USD.',
  // Dimension values, reporting part 2.5 (docs/specification-notes.md#reporting-part-2-5).
  publisher_id: 'Publisher identifier.',
  publisher_name: 'Publisher name.',
  publisher_domain: 'Publisher primary domain.',
  template_id: 'Template identifier.',
  template_name: 'Template name.',
  ad_slot_id: 'Ad slot identifier.',
  ad_slot_name: 'Ad slot name.',
  placement_id: 'Identifier of an email drop, passed in the ad tag.',
  list_id: 'Optional mailing-list identifier passed in the ad tag.',
  segmented_keys: 'Optional key used for key-value targeting, passed in the ad tag.',
  segmented_values: 'Values passed in the ad tag for those keys.',
  advertiser_id: 'Advertiser identifier.',
  advertiser_name: 'Advertiser name.',
  advertiser_domain: 'Advertiser primary domain.',
  insertion_order_id: 'Insertion order identifier.',
  insertion_order_name: 'Insertion order name.',
  campaign_id: 'Campaign identifier.',
  campaign_name: 'Campaign name.',
  campaign_type: 'One of newsletter, roadblock, takeover, dedicated, display.',
  demand_type: 'One of direct, house, exchange, fallback_ads.',
  strategy_id: 'Strategy identifier.',
  strategy_name: 'Strategy name.',
  creative_id: 'Creative identifier.',
  creative_name: 'Creative name.',
  size: 'Ad size, <width>x<height>.',
  year: 'Year, YYYY.',
  month: 'Month, MM.',
  year_month: 'Year and month, YYYY MM.',
  day: 'Day, YYYY-MM-DD (UTC).',
  day_hour: 'Day and hour, YYYY-MM-DD HH (UTC).',
  hour: 'Hour of the day (UTC).',
  age: 'Age range: 18-20, 21-24, 25-34, 35-44, 45-54, 55-64, 65+.',
  gender: 'Perceived gender: male or female.',
  country: 'Country of viewing.',
  region: 'State or province of viewing.',
  metro: 'Market-area code.',
  zip: 'Zip code.',
  device_maker: 'Device brand.',
  device_model: 'Phone or tablet model.',
  device_type: 'PC, Phone, Tablet, WebmailProxy (a webmail web client) or a desktop media center.',
  os: 'Operating system.',
  browser: 'Browser or email client.',
  email_domain: "Recipient's email domain.",
};

export function describeField(name: string): string | undefined {
  return FIELD_DESCRIPTIONS[name];
}
