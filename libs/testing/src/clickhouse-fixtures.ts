import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ClickHouseReportStore, type ClickHouseStoreOptions } from '@app/report-store';
import { STACK } from './stack-env';

/** The project's ClickHouse migrations, as the tests run them from the repository root. */
const MIGRATIONS_DIR = 'clickhouse';

/**
 * A store on the stack's ClickHouse as the integration tests open it (not migrated): the project's
 * migrations, a 1-in-10 sample, 20 s queries, ten years of raw events, and what `options` changes.
 */
export function testClickHouseStore(
  database: string,
  options: Partial<ClickHouseStoreOptions> = {},
): ClickHouseReportStore {
  return new ClickHouseReportStore({
    url: STACK.clickhouseUrl,
    database,
    migrationsDir: MIGRATIONS_DIR,
    sampleDenominator: 10,
    queryTimeoutMs: 20_000,
    rawRetentionMonths: 120,
    ...options,
  });
}

/**
 * Sends one statement to the stack's ClickHouse over HTTP; a SELECT or SHOW answers its rows as
 * TabSeparated lines. A failure throws with ClickHouse's message.
 */
export async function clickHouseLines(sql: string): Promise<string[]> {
  const response = await fetch(`${STACK.clickhouseUrl}/`, {
    method: 'POST',
    body: /^(SELECT|SHOW)/.test(sql) ? `${sql} FORMAT TSV` : sql,
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`${sql}: ${text}`);
  }
  return text.split('\n').filter(Boolean);
}

/** A copy of the migrations `keep` keeps, in a folder of its own: a store as another release left it. */
export function migrationsCopy(keep: (file: string) => boolean): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'adx-migrations-'));
  for (const file of readdirSync(MIGRATIONS_DIR).filter(keep)) {
    copyFileSync(path.join(MIGRATIONS_DIR, file), path.join(dir, file));
  }
  return dir;
}
