import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ClickHouseClient } from '@clickhouse/client';

export interface AppliedMigration {
  readonly version: number;
  readonly name: string;
}

/** `clickhouse/NNN_name.sql`, in version order. */
export function readMigrations(dir: string): { version: number; name: string; statements: string[] }[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n');
      return {
        version: Number(file.slice(0, 3)),
        name: file.slice(4, -4),
        statements: text
          .split(/;\s*(?:\n|$)/)
          .map((s) => s.trim())
          .filter(Boolean),
      };
    });
}

/**
 * Applies the numbered migrations not yet recorded in `schema_migrations`. Each statement is
 * idempotent (`IF NOT EXISTS`), so a run interrupted halfway is finished by the next one.
 */
export async function migrateClickHouse(client: ClickHouseClient, dir: string): Promise<AppliedMigration[]> {
  await client.command({
    query:
      'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = MergeTree ORDER BY version',
  });
  const result = await client.query({
    query: 'SELECT version FROM schema_migrations',
    format: 'JSONEachRow',
  });
  const done = new Set((await result.json<{ version: number | string }>()).map((r) => Number(r.version)));
  const applied: AppliedMigration[] = [];
  for (const migration of readMigrations(dir)) {
    if (done.has(migration.version)) {
      continue;
    }
    for (const statement of migration.statements) {
      await client.command({ query: statement });
    }
    await client.insert({
      table: 'schema_migrations',
      values: [
        {
          version: migration.version,
          name: migration.name,
          applied_at: new Date().toISOString().slice(0, 19).replace('T', ' '),
        },
      ],
      format: 'JSONEachRow',
    });
    applied.push({ version: migration.version, name: migration.name });
  }
  return applied;
}
