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
  /** Its columns, and the SELECT over the raw rows (`events_raw` or `events_raw FINAL`) that fills them for one day. */
  readonly columns: readonly string[];
  readonly select: (day: string, raw: string) => string;
}

const exactTier: SealedTier = {
  table: 'exact_daily',
  columns: ['day', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES, 'seal_mark', 'live_rows'],
  select: (day, raw) =>
    `SELECT event_date, ${EXACT_KEY_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m})`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} WHERE event_date = toDate(${stringLiteral(day)})
     GROUP BY event_date, ${EXACT_KEY_FIELDS.join(', ')}`,
};

const inexactTier: SealedTier = {
  table: 'inexact_sample',
  columns: ['day', 'hour', ...INEXACT_FIELDS, ...MEASURE_NAMES, 'seal_mark', 'live_rows'],
  select: (day, raw) =>
    `SELECT event_date, hour, ${INEXACT_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, hour, ${INEXACT_FIELDS.join(', ')}`,
};

const rollupKey = ['pair.1', 'pair.2', ...ROLLUP_SCOPE_FIELDS].join(', ');

/** The sample's rollup: one row per day, dimension, value and account, from the same sampled rows. */
const rollupTier: SealedTier = {
  table: 'inexact_daily',
  columns: ['day', 'dimension', 'value', ...ROLLUP_SCOPE_FIELDS, ...MEASURE_NAMES, 'seal_mark', 'live_rows'],
  select: (day, raw) =>
    `SELECT event_date, ${rollupKey}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} ARRAY JOIN ${ROLLUP_PAIRS_SQL} AS pair
     WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, ${rollupKey}`,
};

/** Staging tables are named `seal_<ms since epoch>_<random>`; ones older than this were abandoned. */
const ABANDONED_AFTER_MS = 10 * 60_000;

/** The day of a daily partition's id (`20261123` is `2026-11-23`). */
export const dayOfPartition = (partitionId: string) =>
  `${partitionId.slice(0, 4)}-${partitionId.slice(4, 6)}-${partitionId.slice(6, 8)}`;

/**
 * Seals closed days: recomputes a day's exact, inexact and rollup rows from its raw rows, one per
 * event id, into a staging table of its own, adds the marker row, and swaps the day's partition in
 * with `REPLACE PARTITION`, content and marker together. The marker is the highest block number of
 * the day's raw parts, read before the recompute: every INSERT takes a new, higher block number,
 * and merges (which drop duplicates) keep it, so "the marker equals the raw partition's highest
 * block" means "no row arrived since the content was computed". A day is resealed while that is
 * not so, or while rows written by the materialized views since the swap (`live_rows`) are there:
 * a late event, a batch written twice, a view that failed half-way. The raw rows are read with
 * FINAL (one row per event id as the sorted parts merge) only when the day holds a duplicate id;
 * a duplicate arriving after that check has a higher block and brings the day back. Two sealers at
 * once are safe: each stages alone, each swap is atomic, and a marker never claims a block its
 * content was not computed from.
 */
export class ClosedDaySealer {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly database: string,
  ) {}

  async seal(now: Date): Promise<SealResult> {
    await this.dropAbandonedStaging();
    const today = now.toISOString().slice(0, 10);
    const rawMarks = new Map<string, string>();
    // Newest first: yesterday is the day people are waiting for.
    for (const { id, mark } of await this.rows<{ id: string; mark: string }>(
      `SELECT partition_id AS id, max(max_block_number) AS mark FROM system.parts
       WHERE database = ${stringLiteral(this.database)} AND table = 'events_raw' AND active
       GROUP BY partition_id ORDER BY partition_id DESC`,
    )) {
      if (/^\d{8}$/.test(id) && dayOfPartition(id) < today) {
        rawMarks.set(dayOfPartition(id), String(mark));
      }
    }
    if (rawMarks.size === 0) {
      return { sealed: [], final: 0 };
    }
    const stale = new Set<string>();
    const sources = new Map<string, string>();
    for (const tier of [exactTier, inexactTier, rollupTier]) {
      const state = await this.tierState(tier, [...rawMarks.keys()]);
      for (const [day, mark] of rawMarks) {
        const s = state.get(day);
        if (s?.sealed !== mark || s.live !== '0') {
          if (!sources.has(day)) {
            sources.set(day, (await this.hasDuplicates(day)) ? 'events_raw FINAL' : 'events_raw');
          }
          await this.sealDay(tier, day, mark, sources.get(day)!);
          stale.add(day);
        }
      }
    }
    return { sealed: [...stale].sort(), final: rawMarks.size - stale.size };
  }

  /** Whether a raw event id of the day is there twice: FINAL reads only the sort key to tell. */
  private async hasDuplicates(day: string): Promise<boolean> {
    const where = `WHERE event_date = toDate(${stringLiteral(day)})`;
    const [{ rows, ids }] = await this.rows<{ rows: string; ids: string }>(
      `SELECT (SELECT count() FROM events_raw ${where}) AS rows, (SELECT count() FROM events_raw FINAL ${where}) AS ids`,
    );
    return String(rows) !== String(ids);
  }

  /** Per day: the marker and the rows the views added since the swap. */
  private async tierState(
    tier: SealedTier,
    days: readonly string[],
  ): Promise<Map<string, { sealed: string; live: string }>> {
    // Not aliased `day`: an alias would shadow the column in WHERE.
    const rows = await this.rows<{ d: string; sealed: string; live: string }>(
      `SELECT toString(day) AS d, sum(seal_mark) AS sealed, sum(live_rows) AS live FROM ${tier.table}
       WHERE day IN (${days.map((d) => `toDate(${stringLiteral(d)})`).join(', ')}) GROUP BY day`,
    );
    return new Map(rows.map((r) => [r.d, { sealed: String(r.sealed), live: String(r.live) }]));
  }

  private async sealDay(tier: SealedTier, day: string, mark: string, raw: string): Promise<void> {
    const staging = `seal_${Date.now()}_${randomBytes(6).toString('hex')}`;
    await this.command(`CREATE TABLE ${staging} AS ${tier.table}`);
    try {
      await this.command(`INSERT INTO ${staging} (${tier.columns.join(', ')}) ${tier.select(day, raw)}`);
      await this.command(
        `INSERT INTO ${staging} (day, seal_mark) VALUES (toDate(${stringLiteral(day)}), ${BigInt(mark)})`,
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
