-- ingested_offsets kept one row per INSERT, and the ingest reads the highest offset of its source
-- before every block: a read that grew with the source's history. A ReplacingMergeTree keyed by
-- source keeps the row of the highest offset once merged; the ingest still takes max(), so rows
-- not yet merged change nothing. `events` is then the count of the last INSERT, not a total.
-- Run with the ingest stopped, as 005: an offset recorded between the copy and the rename is left
-- behind (its events would be written again, and sealing counts them once).
DROP TABLE IF EXISTS ingested_offsets_mv;

CREATE TABLE IF NOT EXISTS ingested_offsets_latest (
    source String,
    last_offset UInt64,
    events UInt64
) ENGINE = ReplacingMergeTree(last_offset)
ORDER BY source;
INSERT INTO ingested_offsets_latest SELECT source, max(last_offset), sum(events) FROM ingested_offsets GROUP BY source;
RENAME TABLE ingested_offsets TO ingested_offsets_log, ingested_offsets_latest TO ingested_offsets;
DROP TABLE ingested_offsets_log;

-- Views run in name order: this one still runs after the raw rows and every tier.
CREATE MATERIALIZED VIEW IF NOT EXISTS ingested_offsets_mv TO ingested_offsets AS
SELECT source, max(offset) AS last_offset, count() AS events
FROM events_raw
GROUP BY source;
