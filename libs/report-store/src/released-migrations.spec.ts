import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMigrations } from './clickhouse/clickhouse-migrator';
import { DUCKDB_MIGRATIONS } from './duckdb/duckdb.migrations';

/**
 * Migrations are frozen once merged: a database records the versions it applied and never runs one
 * again, so an edited migration changes nothing where it already ran and leaves two schemas under
 * one version. A change is a new numbered migration. Below, the SHA-256 of the statements each
 * migration runs (comment lines of clickhouse/*.sql are not sent, so they may still be corrected).
 * A new migration gets its line here when it is merged; a line is never changed.
 */
const RELEASED: Record<'clickhouse' | 'duckdb', Record<number, string>> = {
  clickhouse: {
    1: '8af88a32fb7b4c2a9c211bf115f0c57bd2fadef5e8b6bc6df7a6066743527774',
    2: '4f003a796fe8986434a12e17e8a398159959f246928ba34a3f538eff2074d5e2',
    3: '5727dbd6cf9227f6feae7eed23089d4bbc2029a22bcd4228e5e81f5dcdcf12cf',
    4: '5ee92da69fbf164f233dd0ad374ae52cbb1b0003a9830c955bdaee798db9fe6d',
    5: 'd50e9334a4031bcddb335a7cbd29d3673edf2003569feb598eea072abffadcec',
    6: '31f16c7308995d9fefbf5e612f8bf5938e38139201886c4d1c95b477fc2ee3e0',
    7: '0bee024d9ef22710558eb84a95a0cd29efbf7dc120c836f0b5062bdc3775946e',
    8: '533bc5f6477bb8ebf3631826d588ec9a7ed41fd4d63ff7a614e3741c450a6784',
    9: 'd48a0f7ebbff447a7e6d94a422e52372414edbd7655e6736f150bd1c087e3ce5',
  },
  duckdb: {
    1: '626cc00d3c7371a4d01e9f9408d77e35b468dec7fceda9dd4bed1b90fe8984f6',
    2: '688d8219c3f65da18e92ff7c4de99881a822333445f46ef1e4023f60c54310b8',
    3: '00074f901358973d21384e6656ddfc4b22c44292795ad10f7dcb0648be7cf15b',
    4: '9cd5f9b201f61a1a02324f50d64c6f51b09b399672f67f5020fe4c23d7e5c530',
  },
};

const hash = (statements: readonly string[]) =>
  createHash('sha256').update(statements.join('\n;\n')).digest('hex');

const STORES = {
  clickhouse: () => readMigrations(path.resolve(__dirname, '../../../clickhouse')),
  duckdb: () => DUCKDB_MIGRATIONS,
};

describe.each(['clickhouse', 'duckdb'] as const)('%s migrations', (store) => {
  const migrations = STORES[store]();

  it('are numbered 1, 2, 3… without a gap or a repeat', () => {
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });

  it('each runs exactly what it ran when it was released', () => {
    for (const migration of migrations) {
      const recorded = RELEASED[store][migration.version];
      expect(
        recorded,
        `${store} migration ${migration.version} (${migration.name}) has no recorded hash: record ${hash(migration.statements)} in released-migrations.spec.ts when it is merged`,
      ).toBeDefined();
      expect(
        hash(migration.statements),
        `${store} migration ${migration.version} (${migration.name}) was edited after its release: revert it and add a new migration`,
      ).toBe(recorded);
    }
    expect(Object.keys(RELEASED[store]).map(Number), 'a released migration was removed').toEqual(
      migrations.map((m) => m.version),
    );
  });
});
