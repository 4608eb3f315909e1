export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

/**
 * Numbered, append-only schema of the embedded store; the runner records what it applied. Frozen
 * like clickhouse/*.sql: a migration that was merged is never edited (a database that applied it
 * would not see the change), a new one is added instead, and duckdb.migrations.spec.ts holds each
 * one's hash. The SQL is literal, not built from the code's lists (EXACT_KEY_FIELDS, INEXACT_FIELDS,
 * MEASURE_NAMES): a change to a list must not rewrite a migration already applied;
 * dimension-schema.spec.ts checks the tables built here against the lists and the writer's column
 * order.
 */
export const DUCKDB_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'exact daily cube',
    statements: [
      `CREATE TABLE IF NOT EXISTS exact_daily (
          day DATE NOT NULL,
          publisher_id VARCHAR NOT NULL,
          publisher_domain VARCHAR NOT NULL,
          template_id VARCHAR NOT NULL,
          ad_slot_id VARCHAR NOT NULL,
          advertiser_id VARCHAR NOT NULL,
          insertion_order_id VARCHAR NOT NULL,
          campaign_id VARCHAR NOT NULL,
          campaign_type VARCHAR NOT NULL,
          demand_type VARCHAR NOT NULL,
          strategy_id VARCHAR NOT NULL,
          creative_id VARCHAR NOT NULL,
          size VARCHAR NOT NULL,
          unique_impressions BIGINT NOT NULL,
          reopens BIGINT NOT NULL,
          clicks BIGINT NOT NULL,
          conversions BIGINT NOT NULL,
          post_view_conversions BIGINT NOT NULL,
          spend_micros BIGINT NOT NULL,
          revenue_micros BIGINT NOT NULL,
          PRIMARY KEY (day, publisher_id, publisher_domain, template_id, ad_slot_id, advertiser_id, insertion_order_id, campaign_id, campaign_type, demand_type, strategy_id, creative_id, size)
        )`,
      `CREATE TABLE IF NOT EXISTS exact_daily_staging AS SELECT * FROM exact_daily LIMIT 0`,
    ],
  },
  {
    version: 2,
    name: 'inexact hash sample',
    statements: [
      `CREATE TABLE IF NOT EXISTS inexact_sample (
          day DATE NOT NULL,
          hour TINYINT NOT NULL,
          publisher_id VARCHAR NOT NULL,
          publisher_domain VARCHAR NOT NULL,
          template_id VARCHAR NOT NULL,
          ad_slot_id VARCHAR NOT NULL,
          advertiser_id VARCHAR NOT NULL,
          insertion_order_id VARCHAR NOT NULL,
          campaign_id VARCHAR NOT NULL,
          campaign_type VARCHAR NOT NULL,
          demand_type VARCHAR NOT NULL,
          strategy_id VARCHAR NOT NULL,
          creative_id VARCHAR NOT NULL,
          size VARCHAR NOT NULL,
          advertiser_domain VARCHAR NOT NULL,
          placement_id VARCHAR NOT NULL,
          list_id VARCHAR NOT NULL,
          segment_key VARCHAR NOT NULL,
          segment_value VARCHAR NOT NULL,
          age VARCHAR NOT NULL,
          gender VARCHAR NOT NULL,
          country VARCHAR NOT NULL,
          region VARCHAR NOT NULL,
          metro VARCHAR NOT NULL,
          zip VARCHAR NOT NULL,
          device_maker VARCHAR NOT NULL,
          device_model VARCHAR NOT NULL,
          device_type VARCHAR NOT NULL,
          os VARCHAR NOT NULL,
          browser VARCHAR NOT NULL,
          email_domain VARCHAR NOT NULL,
          weight INTEGER NOT NULL,
          unique_impressions BIGINT NOT NULL,
          reopens BIGINT NOT NULL,
          clicks BIGINT NOT NULL,
          conversions BIGINT NOT NULL,
          post_view_conversions BIGINT NOT NULL,
          spend_micros BIGINT NOT NULL,
          revenue_micros BIGINT NOT NULL
        )`,
    ],
  },
  {
    version: 3,
    name: 'ingested offsets',
    statements: [
      `CREATE TABLE IF NOT EXISTS ingested_offsets (
        source VARCHAR PRIMARY KEY,
        last_offset HUGEINT NOT NULL,
        events BIGINT NOT NULL,
        stored_at TIMESTAMP NOT NULL DEFAULT current_timestamp
      )`,
    ],
  },
  {
    version: 4,
    name: 'ingested event ids',
    statements: [
      // The 128-bit MD5 of each stored event id (collisions are out of reach at any volume this store
      // holds), so that an event delivered twice under two offsets (a producer retry) counts once.
      // No primary key: DuckDB keeps an index in memory it cannot spill (about 100 bytes an id),
      // while a lookup of one day's ids is a scan that DUCKDB_MEMORY_LIMIT bounds.
      `CREATE TABLE IF NOT EXISTS ingested_events (id UHUGEINT NOT NULL, day DATE NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ingested_events_staging (id UHUGEINT NOT NULL, day DATE NOT NULL)`,
    ],
  },
];
