-- The exact tier: a daily cube keyed by the catalog dimensions, summed on merge. Queries sum again,
-- so rows not yet merged still add up exactly.
CREATE TABLE IF NOT EXISTS exact_daily (
    day Date,
    publisher_id String,
    publisher_domain String,
    template_id String,
    ad_slot_id String,
    advertiser_id String,
    insertion_order_id String,
    campaign_id String,
    campaign_type String,
    demand_type String,
    strategy_id String,
    creative_id String,
    size String,
    unique_impressions UInt64,
    reopens UInt64,
    clicks UInt64,
    conversions UInt64,
    post_view_conversions UInt64,
    spend_micros UInt64,
    revenue_micros UInt64
) ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (day, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size);

CREATE MATERIALIZED VIEW IF NOT EXISTS exact_daily_mv TO exact_daily AS
SELECT
    event_date AS day,
    publisher_id,
    publisher_domain,
    template_id,
    ad_slot_id,
    advertiser_id,
    insertion_order_id,
    campaign_id,
    campaign_type,
    demand_type,
    strategy_id,
    creative_id,
    size,
    sum(unique_impressions) AS unique_impressions,
    sum(reopens) AS reopens,
    sum(clicks) AS clicks,
    sum(conversions) AS conversions,
    sum(post_view_conversions) AS post_view_conversions,
    sum(spend_micros) AS spend_micros,
    sum(revenue_micros) AS revenue_micros
FROM events_raw
GROUP BY day, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size;
