import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIMENSION_FIELDS } from '@app/events';
import { MEASURE_NAMES, SPLITS } from '@app/report-model';
import { readMigrations } from './clickhouse/clickhouse-migrator';
import { RAW_COLUMNS } from './clickhouse/clickhouse-ingest';
import {
  PADDED_HOUR_SQL,
  ROLLUP_DIMENSIONS,
  ROLLUP_SCOPE_FIELDS,
  rollupDimensionOf,
} from './clickhouse/inexact-rollup';
import {
  applyStatement,
  replayMigrations,
  type ClickHouseSchema,
  type ViewDef,
} from './clickhouse/clickhouse-schema.spec-helper';
import { DUCKDB_MIGRATIONS } from './duckdb/duckdb.migrations';
import { EXACT_KEY_FIELDS, INEXACT_FIELDS } from './event-rollup';

/**
 * An event dimension is written in several places: the event schema (DIMENSION_FIELDS), the tiers'
 * lists (EXACT_KEY_FIELDS, INEXACT_FIELDS), the split catalog, the ClickHouse ingest (RAW_COLUMNS),
 * the ClickHouse migrations (events_raw, exact_daily, inexact_sample, their materialized views, the
 * rollup's ARRAY JOIN) and the DuckDB migrations. These tests read the migrations' text (no
 * server) and hold every place to the others, so that a dimension added to one place alone fails
 * here, by name, rather than as an empty column in a report. docs/adding-a-dimension.md lists the
 * places.
 */

const CLICKHOUSE_DIR = path.resolve(__dirname, '../../../clickhouse');
const SEAL_COLUMNS = ['seal_mark', 'live_rows'];

const sorted = (names: Iterable<string>) => [...names].sort();

/** The splits read from the event's time (its day and hour), not from a dimension. */
const TIME_SPLITS = SPLITS.filter((s) => s.sortKind === 'date' || s.sortKind === 'time').map((s) => s.name);

/** The dimension column a split reads. */
const columnOf = (split: string) => rollupDimensionOf(split) ?? split;

describe('every home of an event dimension agrees', () => {
  let clickhouse: ClickHouseSchema;

  const columns = (table: string) => {
    const found = clickhouse.tables.get(table);
    expect(found, `table ${table} after clickhouse/*.sql`).toBeDefined();
    return found!.columns.map((c) => c.name);
  };
  const view = (name: string): ViewDef => {
    const found = clickhouse.views.get(name);
    expect(found, `view ${name} after clickhouse/*.sql`).toBeDefined();
    return found!;
  };

  beforeAll(() => {
    clickhouse = replayMigrations(readMigrations(CLICKHOUSE_DIR));
  });

  describe('in the code', () => {
    it('the split catalog has a split for every dimension, and reads no other', () => {
      const read = SPLITS.filter((s) => !TIME_SPLITS.includes(s.name)).map((s) => columnOf(s.name));
      expect(sorted(read)).toEqual(sorted(DIMENSION_FIELDS));
    });

    it("the exact cube's keys are the exact splits' dimensions", () => {
      const exact = SPLITS.filter((s) => s.exactness === 'exact' && !TIME_SPLITS.includes(s.name));
      expect(sorted(exact.map((s) => columnOf(s.name)))).toEqual(sorted(EXACT_KEY_FIELDS));
    });

    it('the inexact tier keeps every dimension once', () => {
      expect(sorted(INEXACT_FIELDS)).toEqual(sorted(DIMENSION_FIELDS));
      expect(new Set(INEXACT_FIELDS).size).toBe(INEXACT_FIELDS.length);
    });

    it('the ClickHouse ingest writes every dimension of events_raw', () => {
      expect(RAW_COLUMNS.filter((c) => (DIMENSION_FIELDS as readonly string[]).includes(c))).toEqual([
        ...INEXACT_FIELDS,
      ]);
    });
  });

  describe('in the ClickHouse migrations', () => {
    it('events_raw has the columns the ingest writes, every dimension a String', () => {
      expect(sorted(columns('events_raw'))).toEqual(sorted(RAW_COLUMNS));
      for (const field of DIMENSION_FIELDS) {
        expect(clickhouse.tables.get('events_raw')!.columns.find((c) => c.name === field)?.type, field).toBe(
          'String',
        );
      }
    });

    it('exact_daily: the day, the exact keys (all in its sorting key), the measures and the seal columns', () => {
      expect(sorted(columns('exact_daily'))).toEqual(
        sorted(['day', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES, ...SEAL_COLUMNS]),
      );
      // A SummingMergeTree sums rows whose sorting key is equal: a dimension outside it would be merged away.
      expect(sorted(clickhouse.tables.get('exact_daily')!.orderBy)).toEqual(
        sorted(['day', ...EXACT_KEY_FIELDS]),
      );
    });

    it('inexact_sample: the day, the hour, every dimension (all in its sorting key), the measures and the seal columns', () => {
      expect(sorted(columns('inexact_sample'))).toEqual(
        sorted(['day', 'hour', ...INEXACT_FIELDS, ...MEASURE_NAMES, ...SEAL_COLUMNS]),
      );
      expect(sorted(clickhouse.tables.get('inexact_sample')!.orderBy)).toEqual(
        sorted(['day', 'hour', ...INEXACT_FIELDS]),
      );
    });

    it.each([
      ['exact_daily_mv', 'exact_daily', ['day', ...EXACT_KEY_FIELDS]],
      ['inexact_sample_mv', 'inexact_sample', ['day', 'hour', ...INEXACT_FIELDS]],
    ])('%s fills every column of %s, copying each dimension and grouping by it', (name, target, keys) => {
      const mv = view(name);
      expect(mv.target).toBe(target);
      expect(mv.from).toBe('events_raw');
      // A view fills its target's columns by name: a column it does not select stays empty.
      expect(sorted(mv.select.map((item) => item.name))).toEqual(sorted(columns(target)));
      for (const field of keys.filter((k) => k !== 'day')) {
        expect(mv.select.find((item) => item.name === field)?.expression, `${name} selects ${field}`).toBe(
          field,
        );
      }
      expect(sorted(mv.groupBy)).toEqual(sorted(keys));
    });

    it("the rollup's view unfolds each rollup dimension from its events_raw column", () => {
      const mv = view('inexact_daily_mv');
      expect(mv.target).toBe('inexact_daily');
      expect(mv.from).toBe('events_raw');
      expect(mv.arrayJoin).toEqual(
        ROLLUP_DIMENSIONS.map((d) => `('${d}', ${d === 'hour' ? PADDED_HOUR_SQL : d})`),
      );
      for (const dimension of ROLLUP_DIMENSIONS) {
        expect(columns('events_raw'), dimension).toContain(dimension);
      }
      expect(sorted(columns('inexact_daily'))).toEqual(
        sorted(['day', 'dimension', 'value', ...ROLLUP_SCOPE_FIELDS, ...MEASURE_NAMES, ...SEAL_COLUMNS]),
      );
      expect(sorted(mv.select.map((item) => item.name))).toEqual(sorted(columns('inexact_daily')));
    });
  });

  describe('in the DuckDB migrations', () => {
    let instance: DuckDBInstance;
    let db: DuckDBConnection;

    /** A table's columns in their order: the store's appenders write rows by position. */
    async function duckColumns(table: string): Promise<string[]> {
      const reader = await db.runAndReadAll(
        'SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
        [table],
      );
      return reader.getRows().map(([name]) => String(name));
    }

    beforeAll(async () => {
      instance = await DuckDBInstance.create(':memory:');
      db = await instance.connect();
      for (const migration of DUCKDB_MIGRATIONS) {
        for (const statement of migration.statements) {
          await db.run(statement);
        }
      }
    });

    afterAll(() => {
      db?.closeSync();
      instance?.closeSync();
    });

    it('exact_daily and its staging table hold what writeExact appends, in its order, keyed by the day and the exact keys', async () => {
      const expected = ['day', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES];
      expect(await duckColumns('exact_daily')).toEqual(expected);
      expect(await duckColumns('exact_daily_staging')).toEqual(expected);
      const key = await db.runAndReadAll(
        "SELECT constraint_column_names FROM duckdb_constraints() WHERE table_name = 'exact_daily' AND constraint_type = 'PRIMARY KEY'",
      );
      expect(JSON.stringify(key.getRowsJson())).toBe(JSON.stringify([[['day', ...EXACT_KEY_FIELDS]]]));
    });

    it('inexact_sample holds what writeSample appends, in its order', async () => {
      expect(await duckColumns('inexact_sample')).toEqual([
        'day',
        'hour',
        ...INEXACT_FIELDS,
        'weight',
        ...MEASURE_NAMES,
      ]);
    });
  });
});

describe('the ClickHouse schema reader', () => {
  const replay = (...statements: string[]) => replayMigrations([{ statements }]);

  it('follows copies, added columns, new sorting keys, renames and drops', () => {
    const schema = replay(
      'CREATE TABLE t (a String, b Array(Tuple(String, UInt8)), c UInt64) ENGINE = SummingMergeTree ORDER BY (a, b)',
      'CREATE TABLE t2 AS t ENGINE = SummingMergeTree PARTITION BY a ORDER BY (a)',
      'ALTER TABLE t2 ADD COLUMN d String AFTER a, ADD COLUMN e UInt8, MODIFY ORDER BY (a, d)',
      'ALTER TABLE t2 DROP COLUMN c',
      'RENAME TABLE t TO t_old, t2 TO t',
      'DROP TABLE t_old',
    );
    expect([...schema.tables.keys()]).toEqual(['t']);
    expect(schema.tables.get('t')).toEqual({
      columns: [
        { name: 'a', type: 'String' },
        { name: 'd', type: 'String' },
        { name: 'b', type: 'Array(Tuple(String, UInt8))' },
        { name: 'e', type: 'UInt8' },
      ],
      orderBy: ['a', 'd'],
    });
  });

  it("reads a view's named select items, its ARRAY JOIN and its GROUP BY", () => {
    const schema = replay(
      'CREATE TABLE r (d Date, x String, n UInt64) ENGINE = MergeTree ORDER BY d',
      `CREATE MATERIALIZED VIEW v TO s AS
       SELECT d AS day, pair.1 AS k, x, sum(n * 2) AS n FROM r
       ARRAY JOIN [('x', x), ('y', concat(x, ', '))] AS pair WHERE n > 0 GROUP BY day, k, x`,
    );
    expect(schema.views.get('v')).toEqual({
      target: 's',
      from: 'r',
      select: [
        { name: 'day', expression: 'd' },
        { name: 'k', expression: 'pair.1' },
        { name: 'x', expression: 'x' },
        { name: 'n', expression: 'sum(n * 2)' },
      ],
      arrayJoin: ["('x', x)", "('y', concat(x, ', '))"],
      groupBy: ['day', 'k', 'x'],
    });
  });

  it('refuses DDL it does not understand rather than skip it', () => {
    const schema = replay('CREATE TABLE t (a String) ENGINE = MergeTree ORDER BY a');
    expect(() => applyStatement(schema, 'ALTER TABLE t RENAME COLUMN a TO b')).toThrow(/does not know/);
    expect(() => applyStatement(schema, 'CREATE DICTIONARY d (a String) PRIMARY KEY a')).toThrow(
      /does not know/,
    );
    expect(() => applyStatement(schema, 'CREATE MATERIALIZED VIEW v TO t AS SELECT a FROM t')).toThrow(
      /does not know/,
    );
  });
});
