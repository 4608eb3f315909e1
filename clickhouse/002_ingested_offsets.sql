-- The highest offset stored per source (topic/partition), filled by the same INSERT as events_raw.
-- The ingest leaves out every event at or below it, so a redelivery after a crash between the
-- insert and the offset commit changes nothing, whatever the batch boundaries of the redelivery.
CREATE TABLE IF NOT EXISTS ingested_offsets (
    source String,
    last_offset UInt64,
    events UInt64
) ENGINE = MergeTree
ORDER BY (source, last_offset);

CREATE MATERIALIZED VIEW IF NOT EXISTS ingested_offsets_mv TO ingested_offsets AS
SELECT source, max(offset) AS last_offset, count() AS events
FROM events_raw
GROUP BY source;
