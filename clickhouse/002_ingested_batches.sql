-- Every stored batch id, filled by the same INSERT as events_raw: a replayed batch is found here
-- and skipped, which makes at-least-once delivery exactly-once in the reports.
CREATE TABLE IF NOT EXISTS ingested_batches (
    batch_id String,
    events UInt64
) ENGINE = SummingMergeTree
ORDER BY batch_id;

CREATE MATERIALIZED VIEW IF NOT EXISTS ingested_batches_mv TO ingested_batches AS
SELECT batch_id, count() AS events
FROM events_raw
GROUP BY batch_id;
