import { EXACT_KEY_FIELDS, INEXACT_FIELDS } from '../event-rollup';
import { MEASURE_NAMES } from '@app/report-model';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

const measureColumns = MEASURE_NAMES.map((m) => `${m} BIGINT NOT NULL`).join(', ');

/** Numbered, append-only schema of the embedded store; the runner records what it applied. */
export const DUCKDB_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'exact daily cube',
    statements: [
      `CREATE TABLE IF NOT EXISTS exact_daily (
        day DATE NOT NULL,
        ${EXACT_KEY_FIELDS.map((f) => `${f} VARCHAR NOT NULL`).join(', ')},
        ${measureColumns},
        PRIMARY KEY (day, ${EXACT_KEY_FIELDS.join(', ')})
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
        ${INEXACT_FIELDS.map((f) => `${f} VARCHAR NOT NULL`).join(', ')},
        weight INTEGER NOT NULL,
        ${measureColumns}
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
