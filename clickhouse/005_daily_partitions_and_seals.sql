-- Closed days are sealed: recomputed from events_raw deduplicated by event_id and swapped in with
-- ALTER TABLE ... REPLACE PARTITION, which works on whole partitions, so the raw table and both
-- tiers move from monthly to daily partitions. Each tier gains two summed columns:
--   seal_mark  set only on the one marker row a seal writes into the day's partition (every
--              dimension empty, every measure 0): the highest block number of the day's raw parts
--              when the seal started, so the content and what it reflects are replaced together;
--              every INSERT takes a higher block number, and merges keep it;
--   live_rows  raw rows summed by the materialized views: any value above 0 in a closed day means
--              rows were added after its last seal (a late event, a retry, a zombie).
-- A closed day is final when its mark equals the highest block of its raw parts and live_rows sums
-- to 0.
-- Run with the ingest stopped: rows inserted between a copy and its rename would be left behind.
DROP TABLE IF EXISTS exact_daily_mv;
DROP TABLE IF EXISTS inexact_sample_mv;
DROP TABLE IF EXISTS ingested_offsets_mv;

-- ReplacingMergeTree on the key that ends with event_id: a seal reads a day with FINAL, which
-- merges the sorted parts as it reads and keeps one row per event id; background merges drop
-- the duplicates for good.
CREATE TABLE IF NOT EXISTS events_raw_by_day AS events_raw
ENGINE = ReplacingMergeTree
PARTITION BY event_date
ORDER BY (event_date, ad_slot_id, event_id);
INSERT INTO events_raw_by_day SELECT * FROM events_raw;
RENAME TABLE events_raw TO events_raw_by_month, events_raw_by_day TO events_raw;
DROP TABLE events_raw_by_month;

CREATE TABLE IF NOT EXISTS exact_daily_by_day AS exact_daily
ENGINE = SummingMergeTree
PARTITION BY day
ORDER BY (day, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size);
ALTER TABLE exact_daily_by_day ADD COLUMN seal_mark UInt64, ADD COLUMN live_rows UInt64;
INSERT INTO exact_daily_by_day SELECT *, toUInt64(0), toUInt64(0) FROM exact_daily;
RENAME TABLE exact_daily TO exact_daily_by_month, exact_daily_by_day TO exact_daily;
DROP TABLE exact_daily_by_month;

CREATE TABLE IF NOT EXISTS inexact_sample_by_day AS inexact_sample
ENGINE = SummingMergeTree
PARTITION BY day
ORDER BY (day, hour, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size, advertiser_domain, placement_id, list_id, segment_key, segment_value, age, gender, country, region, metro, zip, device_maker, device_model, device_type, os, browser, email_domain);
ALTER TABLE inexact_sample_by_day ADD COLUMN seal_mark UInt64, ADD COLUMN live_rows UInt64;
INSERT INTO inexact_sample_by_day SELECT *, toUInt64(0), toUInt64(0) FROM inexact_sample;
RENAME TABLE inexact_sample TO inexact_sample_by_month, inexact_sample_by_day TO inexact_sample;
DROP TABLE inexact_sample_by_month;

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
    sum(revenue_micros) AS revenue_micros,
    toUInt64(0) AS seal_mark,
    count() AS live_rows
FROM events_raw
GROUP BY day, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size;

CREATE MATERIALIZED VIEW IF NOT EXISTS inexact_sample_mv TO inexact_sample AS
SELECT
    event_date AS day,
    hour,
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
    advertiser_domain,
    placement_id,
    list_id,
    segment_key,
    segment_value,
    age,
    gender,
    country,
    region,
    metro,
    zip,
    device_maker,
    device_model,
    device_type,
    os,
    browser,
    email_domain,
    sum(unique_impressions * sample_weight) AS unique_impressions,
    sum(reopens * sample_weight) AS reopens,
    sum(clicks * sample_weight) AS clicks,
    sum(conversions * sample_weight) AS conversions,
    sum(post_view_conversions * sample_weight) AS post_view_conversions,
    sum(spend_micros * sample_weight) AS spend_micros,
    sum(revenue_micros * sample_weight) AS revenue_micros,
    toUInt64(0) AS seal_mark,
    count() AS live_rows
FROM events_raw
WHERE sample_weight > 0
GROUP BY day, hour, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size, advertiser_domain, placement_id, list_id, segment_key, segment_value, age, gender, country, region, metro, zip, device_maker, device_model, device_type, os, browser, email_domain;

-- Views run in name order, so the offset is still recorded after the raw rows and both tiers.
CREATE MATERIALIZED VIEW IF NOT EXISTS ingested_offsets_mv TO ingested_offsets AS
SELECT source, max(offset) AS last_offset, count() AS events
FROM events_raw
GROUP BY source;
