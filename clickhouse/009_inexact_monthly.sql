-- The closed days of the rollup (inexact_daily) copied into monthly parts keyed by dimension first,
-- for the reports to read. A 30-day split on inexact_daily opens 30 daily parts × its columns and
-- decompresses a block of each to read a few hundred rows of each day: ClickHouse's time was set by
-- the parts, not the rows (BENCHMARKS.md). Here the month's rows of one dimension lie together in one
-- part. inexact_daily stays what the views and the sealer write; this table is written only by the
-- sealer (closed-day.sealer.ts), which rebuilds a month whole from inexact_daily into a staging table
-- and swaps it in with REPLACE PARTITION whenever a day of it was (re)sealed, so a month here is
-- always a copy of the daily rows of its closed days as they were at one instant.
-- A report reads the days up to the newest seal marker here (dimension '', seal_mark > 0) from this
-- table and the later ones from inexact_daily (clickhouse-query.builder.ts).
-- `side` '' holds the rollup's rows as they are; 'advertiser' the same summed over publishers
-- (publisher_id empty) and 'publisher' summed over advertisers (advertiser_id empty). A query scoped
-- by advertisers that names no publisher reads the advertiser side: a row per advertiser rather than
-- per advertiser and publisher pair, which is how the rows of an account grow with the exchange.
-- Sorted by dimension, side, then the account columns every API query is scoped by (a 30-day zip
-- split of one account's advertisers on 50 million events: 24-27 ms against 40-51 ms with the day
-- and value before them), then day and value.
-- MergeTree, not SummingMergeTree: a rebuild writes each key once, and a summing merge would drop a
-- row whose measures are all 0.
CREATE TABLE IF NOT EXISTS inexact_monthly (
    side String,
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
) ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (dimension, side, advertiser_id, publisher_id, day, value)
SETTINGS index_granularity = 256;

-- Every closed day already stored, sealed or not (days whose raw events are past retention are never
-- sealed again, and only this copy brings them here). Guarded so that a migration run again after a
-- failure further on copies nothing twice. The ingest may run: a row the views add to a closed day
-- during the copy comes with a raw block that has the day sealed and its month copied again.
INSERT INTO inexact_monthly
SELECT
    side,
    day,
    dimension,
    value,
    if(side = 'advertiser', '', publisher_id) AS publisher,
    if(side = 'publisher', '', advertiser_id) AS advertiser,
    sum(unique_impressions),
    sum(reopens),
    sum(clicks),
    sum(conversions),
    sum(post_view_conversions),
    sum(spend_micros),
    sum(revenue_micros),
    sum(seal_mark),
    sum(live_rows)
FROM inexact_daily
ARRAY JOIN ['', 'advertiser', 'publisher'] AS side
WHERE day < today() AND (side = '' OR dimension != '') AND (SELECT count() FROM inexact_monthly) = 0
GROUP BY side, day, dimension, value, publisher, advertiser;
