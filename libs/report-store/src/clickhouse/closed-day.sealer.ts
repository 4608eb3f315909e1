import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { MEASURE_NAMES } from '@app/report-model';
import type { SealResult } from '../report-store.port';
import { EXACT_KEY_FIELDS, INEXACT_FIELDS } from '../event-rollup';
import { stringLiteral } from './clickhouse-literal';
import { ROLLUP_PAIRS_SQL, ROLLUP_SCOPE_FIELDS } from './inexact-rollup';

/** A tier as the sealer sees it: its table and how a day of it is computed from raw rows. */
interface SealedTier {
  readonly table: 'exact_daily' | 'inexact_sample' | 'inexact_daily';
  /** Its columns, and the SELECT over `events_raw FINAL` that fills them for one day. */
  readonly columns: readonly string[];
  readonly select: (day: string) => string;
}

const exactTier: SealedTier = {
  table: 'exact_daily',
  columns: ['day', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES, 'seal_raw_rows', 'live_rows'],
  select: (day) =>
    `SELECT event_date, ${EXACT_KEY_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m})`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM events_raw FINAL WHERE event_date = toDate(${stringLiteral(day)})
     GROUP BY event_date, ${EXACT_KEY_FIELDS.join(', ')}`,
};

const inexactTier: SealedTier = {
  table: 'inexact_sample',
  columns: ['day', 'hour', ...INEXACT_FIELDS, ...MEASURE_NAMES, 'seal_raw_rows', 'live_rows'],
  select: (day) =>
    `SELECT event_date, hour, ${INEXACT_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM events_raw FINAL WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, hour, ${INEXACT_FIELDS.join(', ')}`,
};

const rollupKey = ['pair.1', 'pair.2', ...ROLLUP_SCOPE_FIELDS].join(', ');

/** The sample's rollup: one row per day, dimension, value and account, from the same sampled rows. */
const rollupTier: SealedTier = {
  table: 'inexact_daily',
  columns: [
    'day',
    'dimension',
    'value',
    ...ROLLUP_SCOPE_FIELDS,
    ...MEASURE_NAMES,
    'seal_raw_rows',
    'live_rows',
  ],
  select: (day) =>
    `SELECT event_date, ${rollupKey}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM events_raw FINAL ARRAY JOIN ${ROLLUP_PAIRS_SQL} AS pair
     WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, ${rollupKey}`,
};

/** Staging tables are named `seal_<ms since epoch>_<random>`; ones older than this were abandoned. */
const ABANDONED_AFTER_MS = 10 * 60_000;

const asDay = (partitionId: string) =>
  `${partitionId.slice(0, 4)}-${partitionId.slice(4, 6)}-${partitionId.slice(6, 8)}`;

/**
 * Seals closed days: recomputes a day's exact, inexact and rollup rows from `events_raw FINAL` (one row per
 * event id) into a staging table of its own, adds the marker row (the raw row count read before
 * the recompute), and swaps the day's partition in with `REPLACE PARTITION`, content and marker
 * together. A day is resealed while its marker differs from its raw row count, or while rows
 * written by the materialized views since the swap (`live_rows`) are there: a late event, a batch
 * written twice, a view that failed half-way. Two sealers at once are safe: each stages alone, each
 * swap is atomic, and a marker never claims more rows than its content was computed from.
 */
export class ClosedDaySealer {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly database: string,
  ) {}

  async seal(now: Date): Promise<SealResult> {
    await this.dropAbandonedStaging();
    const today = now.toISOString().slice(0, 10);
    const rawRows = new Map<string, string>();
    // Newest first: yesterday is the day people are waiting for.
    for (const { id, n } of await this.rows<{ id: string; n: string }>(
      `SELECT partition_id AS id, sum(rows) AS n FROM system.parts
       WHERE database = ${stringLiteral(this.database)} AND table = 'events_raw' AND active
       GROUP BY partition_id ORDER BY partition_id DESC`,
    )) {
      if (/^\d{8}$/.test(id) && asDay(id) < today) {
        rawRows.set(asDay(id), n);
      }
    }
    if (rawRows.size === 0) {
      return { sealed: [], final: 0 };
    }
    const stale = new Set<string>();
    for (const tier of [exactTier, inexactTier, rollupTier]) {
      const state = await this.tierState(tier, [...rawRows.keys()]);
      for (const [day, n] of rawRows) {
        const s = state.get(day);
        if (s?.sealed !== n || s.live !== '0') {
          await this.sealDay(tier, day, n);
          stale.add(day);
        }
      }
    }
    return { sealed: [...stale].sort(), final: rawRows.size - stale.size };
  }

  /** Per day: the marker's raw row count and the rows the views added since. */
  private async tierState(
    tier: SealedTier,
    days: readonly string[],
  ): Promise<Map<string, { sealed: string; live: string }>> {
    // Not aliased `day`: an alias would shadow the column in WHERE.
    const rows = await this.rows<{ d: string; sealed: string; live: string }>(
      `SELECT toString(day) AS d, sum(seal_raw_rows) AS sealed, sum(live_rows) AS live FROM ${tier.table}
       WHERE day IN (${days.map((d) => `toDate(${stringLiteral(d)})`).join(', ')}) GROUP BY day`,
    );
    return new Map(rows.map((r) => [r.d, { sealed: String(r.sealed), live: String(r.live) }]));
  }

  private async sealDay(tier: SealedTier, day: string, rawRows: string): Promise<void> {
    const staging = `seal_${Date.now()}_${randomBytes(6).toString('hex')}`;
    await this.command(`CREATE TABLE ${staging} AS ${tier.table}`);
    try {
      await this.command(`INSERT INTO ${staging} (${tier.columns.join(', ')}) ${tier.select(day)}`);
      await this.command(
        `INSERT INTO ${staging} (day, seal_raw_rows) VALUES (toDate(${stringLiteral(day)}), ${BigInt(rawRows)})`,
      );
      await this.command(
        `ALTER TABLE ${tier.table} REPLACE PARTITION ID ${stringLiteral(day.replaceAll('-', ''))} FROM ${staging}`,
      );
    } finally {
      await this.command(`DROP TABLE IF EXISTS ${staging}`);
    }
  }

  /** Staging tables of a sealer that died between CREATE and DROP. */
  private async dropAbandonedStaging(): Promise<void> {
    const tables = await this.rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = ${stringLiteral(this.database)} AND name LIKE 'seal%'`,
    );
    for (const { name } of tables) {
      const created = Number(/^seal_(\d+)_[0-9a-f]+$/.exec(name)?.[1]);
      if (created > 0 && Date.now() - created > ABANDONED_AFTER_MS) {
        await this.command(`DROP TABLE IF EXISTS ${name}`);
      }
    }
  }

  private async rows<T>(query: string): Promise<T[]> {
    const result = await this.client.query({ query, format: 'JSONEachRow' });
    return result.json<T>();
  }

  private async command(query: string): Promise<void> {
    await this.client.command({ query });
  }
}
