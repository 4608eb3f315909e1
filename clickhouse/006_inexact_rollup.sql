-- The inexact tier rolled up per day, dimension and account: the sample's weighted measures summed
-- for each value of each dimension an inexact split reads (one entry per sampled row and dimension,
-- through ARRAY JOIN), keyed by the account scope's columns because every API query is scoped by
-- publisher_id or advertiser_id. A split on one of these dimensions, filtered on it, the day or the
-- scope, sums exactly the sample rows the sample's own query would (each sampled row adds to one
-- value of every dimension), and reads thousands of rows where the sample holds millions.
-- `dimension` is the events_raw column, `value` its text (hour zero-padded, as day_hour shows it).
-- The dimension list is the code's (libs/report-store/src/clickhouse/inexact-rollup.ts);
-- test/integration/clickhouse-upgrade.test.ts checks that the two agree.
-- Granules of 256 rows rather than 8192: a day holds about 20,000 rows over every dimension, of
-- which a split reads one dimension's few hundred; with 8192 it read whole granules of the others
-- (362,224 rows for a 30-day country split on 50 million events, not 5,400).
-- seal_mark and live_rows as in 005: the sealer swaps a closed day in from events_raw FINAL with
-- one marker row (dimension and every key empty); live_rows counts the (row, dimension) entries the
-- view added since.
-- Run with the ingest stopped, as 005: the copy below and the view would both hold rows inserted
-- in between (until their day is sealed).
CREATE TABLE IF NOT EXISTS inexact_daily (
    day Date,
    dimension String,
    value String,
    publisher_id String,
    advertiser_id String,
    unique_impressions UInt64,
    reopens UInt64,
    clicks UInt64,
    conversions UInt64,
    post_view_conversions UInt64,
    spend_micros UInt64,
    revenue_micros UInt64,
    seal_mark UInt64,
    live_rows UInt64
) ENGINE = SummingMergeTree
PARTITION BY day
ORDER BY (day, dimension, value, publisher_id, advertiser_id)
SETTINGS index_granularity = 256;

-- The days already stored, from the sample (raw events past the retention are gone): its rows,
-- and its seal markers as the rollup's own, so that a final day stays final. Guarded so that a
-- migration run again after a failure further on copies nothing twice.
INSERT INTO inexact_daily
SELECT
    day,
    pair.1 AS dimension,
    pair.2 AS value,
    publisher_id,
    advertiser_id,
    sum(unique_impressions) AS unique_impressions,
    sum(reopens) AS reopens,
    sum(clicks) AS clicks,
    sum(conversions) AS conversions,
    sum(post_view_conversions) AS post_view_conversions,
    sum(spend_micros) AS spend_micros,
    sum(revenue_micros) AS revenue_micros,
    -- seal_mark and live_rows, not aliased: 18.16 would put the alias in place of the column in WHERE
    toUInt64(0),
    sum(live_rows)
FROM inexact_sample
ARRAY JOIN [
    ('publisher_domain', publisher_domain),
    ('advertiser_domain', advertiser_domain),
    ('hour', if(hour < 10, concat('0', toString(hour)), toString(hour))),
    ('age', age),
    ('gender', gender),
    ('country', country),
    ('region', region),
    ('metro', metro),
    ('zip', zip),
    ('device_maker', device_maker),
    ('device_model', device_model),
    ('device_type', device_type),
    ('os', os),
    ('browser', browser),
    ('placement_id', placement_id),
    ('list_id', list_id),
    ('segment_key', segment_key),
    ('segment_value', segment_value),
    ('email_domain', email_domain)
] AS pair
WHERE seal_mark = 0 AND (SELECT count() FROM inexact_daily) = 0
GROUP BY day, dimension, value, publisher_id, advertiser_id
UNION ALL
SELECT
    day,
    '' AS dimension,
    '' AS value,
    '' AS publisher_id,
    '' AS advertiser_id,
    toUInt64(0) AS unique_impressions,
    toUInt64(0) AS reopens,
    toUInt64(0) AS clicks,
    toUInt64(0) AS conversions,
    toUInt64(0) AS post_view_conversions,
    toUInt64(0) AS spend_micros,
    toUInt64(0) AS revenue_micros,
    sum(seal_mark),
    toUInt64(0)
FROM inexact_sample
WHERE seal_mark > 0 AND (SELECT count() FROM inexact_daily) = 0
GROUP BY day;

-- Views run in name order: after exact_daily_mv, before inexact_sample_mv and ingested_offsets_mv,
-- so the offset is still recorded last.
CREATE MATERIALIZED VIEW IF NOT EXISTS inexact_daily_mv TO inexact_daily AS
SELECT
    event_date AS day,
    pair.1 AS dimension,
    pair.2 AS value,
    publisher_id,
    advertiser_id,
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
ARRAY JOIN [
    ('publisher_domain', publisher_domain),
    ('advertiser_domain', advertiser_domain),
    ('hour', if(hour < 10, concat('0', toString(hour)), toString(hour))),
    ('age', age),
    ('gender', gender),
    ('country', country),
    ('region', region),
    ('metro', metro),
    ('zip', zip),
    ('device_maker', device_maker),
    ('device_model', device_model),
    ('device_type', device_type),
    ('os', os),
    ('browser', browser),
    ('placement_id', placement_id),
    ('list_id', list_id),
    ('segment_key', segment_key),
    ('segment_value', segment_value),
    ('email_domain', email_domain)
] AS pair
WHERE sample_weight > 0
GROUP BY day, dimension, value, publisher_id, advertiser_id;
