import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { MEASURE_NAMES } from '@app/report-model';
import type { SealResult } from '../report-store.port';
import { ReportStoreErrorCode, ReportStoreException } from '../report-store.exception';
import { EXACT_KEY_FIELDS, INEXACT_FIELDS } from '../event-rollup';
import { stringLiteral } from './clickhouse-literal';
import { unreplicatedEngine } from './clickhouse-cluster';
import {
  MONTHLY_SIDES,
  ROLLUP_DIMENSIONS,
  ROLLUP_PAIRS_SQL,
  ROLLUP_SCOPE_FIELDS,
  SIDE_OF,
} from './inexact-rollup';

/** A tier as the sealer sees it: its table and how a day of it is computed from raw rows. */
interface SealedTier {
  readonly table: 'exact_daily' | 'inexact_sample' | 'inexact_daily';
  /**
   * Its columns, the raw columns it reads, and the SELECT that fills them for one day from `raw`:
   * `events_raw`, `events_raw FINAL`, or a subquery of the raw columns, one row per event id.
   */
  readonly columns: readonly string[];
  readonly reads: readonly string[];
  readonly select: (day: string, raw: string) => string;
  /**
   * A String key column that the day's marker row fills with a token of its own seal, so that the
   * markers of two seals are two rows that no merge sums into one (`markerToken`).
   */
  readonly markerColumn: string;
}

const exactTier: SealedTier = {
  table: 'exact_daily',
  columns: ['day', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES, 'seal_mark', 'live_rows'],
  reads: ['event_date', ...EXACT_KEY_FIELDS, ...MEASURE_NAMES],
  select: (day, raw) =>
    `SELECT event_date, ${EXACT_KEY_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m})`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} WHERE event_date = toDate(${stringLiteral(day)})
     GROUP BY event_date, ${EXACT_KEY_FIELDS.join(', ')}`,
  markerColumn: 'publisher_id',
};

const inexactTier: SealedTier = {
  table: 'inexact_sample',
  columns: ['day', 'hour', ...INEXACT_FIELDS, ...MEASURE_NAMES, 'seal_mark', 'live_rows'],
  reads: ['event_date', 'hour', ...INEXACT_FIELDS, 'sample_weight', ...MEASURE_NAMES],
  select: (day, raw) =>
    `SELECT event_date, hour, ${INEXACT_FIELDS.join(', ')}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, hour, ${INEXACT_FIELDS.join(', ')}`,
  markerColumn: 'publisher_id',
};

const rollupKey = ['pair.1', 'pair.2', ...ROLLUP_SCOPE_FIELDS].join(', ');

/** The rollup's key columns and the columns summed under them, in its column order. */
const ROLLUP_KEY_COLUMNS = ['day', 'dimension', 'value', ...ROLLUP_SCOPE_FIELDS] as const;
const ROLLUP_SUMMED_COLUMNS = [...MEASURE_NAMES, 'seal_mark', 'live_rows'] as const;

/** The sample's rollup: one row per day, dimension, value and account, from the same sampled rows. */
const rollupTier: SealedTier = {
  table: 'inexact_daily',
  columns: [...ROLLUP_KEY_COLUMNS, ...ROLLUP_SUMMED_COLUMNS],
  reads: [
    ...new Set([
      'event_date',
      ...ROLLUP_DIMENSIONS,
      ...ROLLUP_SCOPE_FIELDS,
      'sample_weight',
      ...MEASURE_NAMES,
    ]),
  ],
  select: (day, raw) =>
    `SELECT event_date, ${rollupKey}, ${MEASURE_NAMES.map((m) => `sum(${m} * sample_weight)`).join(', ')}, toUInt64(0), toUInt64(0)
     FROM ${raw} ARRAY JOIN ${ROLLUP_PAIRS_SQL} AS pair
     WHERE event_date = toDate(${stringLiteral(day)}) AND sample_weight > 0
     GROUP BY event_date, ${rollupKey}`,
  markerColumn: 'value',
};

/** Every table a seal swaps partitions of. */
const SEALED_TABLES = ['exact_daily', 'inexact_sample', 'inexact_daily', 'inexact_monthly'] as const;

/**
 * Duplicated ids a day's recompute lists, at most (as hashes, twice in each tier's query): 4,096
 * hashes of up to 20 digits twice over keep the query under max_query_size (256 KiB). A day with
 * more (a whole batch written twice) is read with FINAL instead.
 */
const MAX_LISTED_DUPLICATES = 4_096;

/** The cityHash64 of each event id a day holds more than once (decimal), or `many`. */
type Duplicates = readonly string[] | 'many';

/**
 * Staging tables are named `seal_<ms since epoch>_<random>`; by default one older than this was
 * left by a sealer that died (a day's recompute or a month's copy takes seconds, not minutes).
 */
export const STAGING_ABANDONED_AFTER_MS = 10 * 60_000;

/**
 * The day's raw rows, one per event id, as the FROM of a tier reading `columns`. A clean day is
 * read plainly. Otherwise every id whose hash is not listed is read plainly too (it is there once),
 * and the ids of a listed hash one row per id (LIMIT 1 BY): the copies of an id are the same event
 * delivered again, so any of them will do. Those rows are few: PREWHERE reads the event_id column
 * alone to find them (18.16 does not move a condition on a key column to PREWHERE by itself).
 * Past MAX_LISTED_DUPLICATES the day is read with FINAL (one row per event id as the sorted parts
 * merge): about 4 times the plain read on 18.16, which merges on one thread.
 */
function rawRows(day: string, duplicates: Duplicates, columns: readonly string[]): string {
  if (duplicates === 'many') {
    return 'events_raw FINAL';
  }
  if (duplicates.length === 0) {
    return 'events_raw';
  }
  const date = `toDate(${stringLiteral(day)})`;
  const hashes = `(${duplicates.join(', ')})`;
  return `(SELECT ${columns.join(', ')} FROM events_raw WHERE event_date = ${date} AND cityHash64(event_id) NOT IN ${hashes}
     UNION ALL
     SELECT ${columns.join(', ')} FROM events_raw PREWHERE cityHash64(event_id) IN ${hashes} WHERE event_date = ${date}
     LIMIT 1 BY event_id)`;
}

/** Days as a ClickHouse list of Date literals, for `day IN (...)`. */
const dateList = (days: readonly string[]) => days.map((d) => `toDate(${stringLiteral(d)})`).join(', ');

/** A staging table's name: `seal_<ms since epoch>_<random>`, or `seal_month_...` for a month's copy. */
const stagingName = (kind: 'day' | 'month' = 'day') =>
  `seal_${kind === 'month' ? 'month_' : ''}${Date.now()}_${randomBytes(6).toString('hex')}`;

/** The key value of a seal's marker row: its mark and a token no other seal has. */
const markerToken = (mark: string) => `seal:${mark}:${randomBytes(6).toString('hex')}`;

/** The day of a daily partition's id (`20261123` is `2026-11-23`). */
export const dayOfPartition = (partitionId: string) =>
  `${partitionId.slice(0, 4)}-${partitionId.slice(4, 6)}-${partitionId.slice(6, 8)}`;

/**
 * A day of a sealed table as its marker rows say: the mark when there is exactly one marker, else
 * `none` (never sealed) or `ghost` (two seals' rows at once: see `ClosedDaySealer`).
 */
export type SealState = string;

/**
 * The SELECT of each day's seal state and live rows in `table` (`sealStateOf` reads its rows). The
 * monthly copy (and a staging copy of it) holds its markers on side '' only.
 */
const sealStateSql = (table: string, days: readonly string[]) =>
  `SELECT toString(day) AS d, toString(max(seal_mark)) AS mark, countIf(seal_mark > 0) AS markers,
     toString(sum(live_rows)) AS live
   FROM ${table} WHERE ${isMonthlyCopy(table) ? "side = '' AND " : ''}day IN (${dateList(days)}) GROUP BY day`;

const isMonthlyCopy = (table: string) => table === 'inexact_monthly' || table.startsWith('seal_month_');

interface SealStateRow {
  readonly d: string;
  readonly mark: string;
  readonly markers: string | number;
  readonly live: string;
}

const sealStateOf = (row: SealStateRow): SealState => {
  const markers = Number(row.markers);
  return markers === 0 ? 'none' : markers === 1 ? row.mark : 'ghost';
};

/**
 * Seals closed days: recomputes a day's exact, inexact and rollup rows from its raw rows, one per
 * event id, into a staging table of its own, adds the marker row, and swaps the day's partition in
 * with `REPLACE PARTITION`, content and marker together. The marker is the highest block number of
 * the day's raw parts, read before the recompute: every INSERT takes a new, higher block number,
 * and merges (which drop duplicates) keep it, so "the marker equals the raw partition's highest
 * block" means "no row arrived since the content was computed". A day is resealed while that is
 * not so, or while rows written by the materialized views since the swap (`live_rows`) are there:
 * a late event, a batch written twice, a view that failed half-way. The day's duplicated ids are
 * looked up after the marker is read (`duplicatedIdHashes`): the rows of every other id are read
 * plainly, those of the duplicated ids one per id (`rawRows`); a duplicate arriving after the
 * lookup has a higher block and brings the day back. Two sealers at once are safe: each stages
 * alone, each swap is atomic, and a marker never claims a block its content was not computed from.
 * After the days, the months of the rollup's copy that hold a day sealed since are copied again
 * (`copyMonths`).
 *
 * A swap does not survive every restart: on a plain MergeTree, ClickHouse (18.16 and releases up to
 * 2026) only deactivates the parts `REPLACE PARTITION` replaced, and deletes them from disk at its
 * next background cleanup, seconds later; a server killed or restarted before then loads them again beside
 * their replacement, so the day holds two seals' rows. Each marker row therefore carries a token of
 * its own seal in a key column (`markerToken`): two seals' markers stay two rows, and a day with
 * more than one marker (`ghost`) is sealed again, which replaces every part it holds. Before a day's
 * first swap, a placeholder marker goes in with the views' rows it replaces, so that their return
 * makes two markers as well (and brings live rows, which reseal the day by themselves).
 */
export class ClosedDaySealer {
  /** The engine clause of each sealed table's staging tables, once looked up (`stagingOf`). */
  private readonly stagingEngines = new Map<string, string>();

  /**
   * `replicated`: the tables are the `Replicated` variants of a cluster's shard (`client` on one of
   * its replicas). The sealer then computes from that replica's own raw parts and its swaps reach the
   * other replica through replication; staging tables are plain MergeTree tables of that node.
   */
  constructor(
    private readonly client: ClickHouseClient,
    private readonly database: string,
    private readonly stagingAbandonedAfterMs = STAGING_ABANDONED_AFTER_MS,
    private readonly replicated = false,
    /**
     * Runs a swap with no INSERT of this process into the shard under way (the store's per-shard
     * queue of quorum INSERTs), so that the quorum check before it stays true until it is done.
     */
    private readonly exclusive: <T>(job: () => Promise<T>) => Promise<T> = (job) => job(),
  ) {}

  async seal(now: Date): Promise<SealResult> {
    await this.dropAbandonedStaging();
    if (this.replicated && ((await this.replicaDown()) || (await this.rawPartsToFetch()))) {
      // A raw part written on the other replica and not fetched yet may have a lower block number
      // than one already here: a seal now would claim a mark its content lacks. The next pass seals.
      return { sealed: [], final: 0 };
    }
    const today = now.toISOString().slice(0, 10);
    const rawMarks = await this.rawMarks(today);
    if (rawMarks.size === 0) {
      return { sealed: [], final: 0 };
    }
    const stale = new Set<string>();
    // Looked up once per day and pass: every tier of the day is read with the same list.
    const duplicates = new Map<string, Duplicates>();
    for (const tier of [exactTier, inexactTier, rollupTier]) {
      const state = await this.tierState(tier.table, [...rawMarks.keys()]);
      for (const [day, mark] of rawMarks) {
        const s = state.get(day);
        if (s?.sealed !== mark || s.live !== '0') {
          if (!duplicates.has(day)) {
            duplicates.set(day, await this.duplicatedIdHashes(day));
          }
          await this.sealDay(tier, day, mark, rawRows(day, duplicates.get(day)!, tier.reads), s?.sealed);
          stale.add(day);
        }
      }
    }
    await this.copyMonths([...rawMarks.keys()], today);
    return { sealed: [...stale].sort(), final: rawMarks.size - stale.size };
  }

  /**
   * The days whose rows in a sealed table hold more than one seal: parts a swap had replaced,
   * loaded again by a restarted ClickHouse. A report must not read them until they are sealed
   * again. Reads the `seal_mark` column (nearly all zeros) and the few marker rows. Every swap
   * replaces a partition that holds a marker (`sealDay` puts one in before a day's first seal), so
   * the parts it replaced hold one too, and coming back they make two.
   */
  async ghostDays(): Promise<string[]> {
    const ghosts = await Promise.all(
      SEALED_TABLES.map((table) =>
        this.rows<{ d: string }>(
          `SELECT toString(day) AS d FROM ${table} PREWHERE seal_mark > 0
           ${table === 'inexact_monthly' ? "WHERE side = '' " : ''}GROUP BY day HAVING count() > 1`,
        ),
      ),
    );
    return [...new Set(ghosts.flat().map(({ d }) => d))].sort();
  }

  /**
   * The highest raw block of each closed day (the mark a seal of it would carry), newest first. A
   * replicated table numbers a partition's blocks from 0 (a plain one from 1), and a mark of 0 would
   * read as no marker, 1 as the placeholder's: there the mark is the block + 2, in the same order.
   */
  private async rawMarks(today: string): Promise<Map<string, string>> {
    const rawMarks = new Map<string, string>();
    const above = this.replicated ? 2 : 0;
    // Newest first: yesterday is the day people are waiting for.
    for (const { id, mark } of await this.rows<{ id: string; mark: string }>(
      `SELECT partition_id AS id, toString(max(max_block_number) + ${above}) AS mark FROM system.parts
       WHERE database = ${stringLiteral(this.database)} AND table = 'events_raw' AND active
       GROUP BY partition_id ORDER BY partition_id DESC`,
    )) {
      if (/^\d{8}$/.test(id) && dayOfPartition(id) < today) {
        rawMarks.set(dayOfPartition(id), String(mark));
      }
    }
    return rawMarks;
  }

  /**
   * Rebuilds each month of `inexact_monthly` (clickhouse/009_inexact_monthly.sql) where a closed day
   * of `days` has a seal state other than the rollup's: a day sealed for the first time or again,
   * or a copy holding two seals of a day. Oldest month first, so that every month before the newest
   * marker there is a copy (the reports read the days up to that marker from it). Months past the
   * raw retention are no longer sealed and keep the copy they have.
   */
  private async copyMonths(days: readonly string[], today: string): Promise<void> {
    const daily = await this.tierState('inexact_daily', days);
    const monthly = await this.tierState('inexact_monthly', days);
    const months = new Set<string>();
    for (const [day, { sealed }] of daily) {
      if (sealed !== 'none' && monthly.get(day)?.sealed !== sealed) {
        months.add(day.slice(0, 7));
      }
    }
    for (const month of [...months].sort()) {
      await this.copyMonth(month, days, today);
    }
  }

  /**
   * The month's closed days (`days` are those of them with raw events), as the rollup holds them
   * now, swapped in whole. Two sealers may copy a month at once: a copy is not swapped in over one
   * holding a newer seal of any of its days (seal markers only grow), so the month never loses a day
   * it had; the next pass copies what is left. A copy of a rollup that holds two seals of a day is
   * not swapped in either (the rollup is sealed again first), and a day of the copy holding two
   * seals never blocks a swap.
   */
  private async copyMonth(month: string, days: readonly string[], today: string): Promise<void> {
    const closed = days.filter((day) => day.startsWith(month));
    const [year, number] = month.split('-').map(Number);
    const next = new Date(Date.UTC(year, number, 1)).toISOString().slice(0, 10);
    const staging = stagingName('month');
    await this.command(await this.stagingOf(staging, 'inexact_monthly'));
    try {
      // Each side (clickhouse/009_inexact_monthly.sql) in one read: the account column a side sums
      // over is left empty (aliased apart from the column, which 18.16 would otherwise replace).
      const key = ['side', 'day', 'dimension', 'value', ...ROLLUP_SCOPE_FIELDS.map((f) => `${f}_kept`)];
      await this.command(
        `INSERT INTO ${staging} (side, ${rollupTier.columns.join(', ')})
         SELECT side, day, dimension, value,
           ${ROLLUP_SCOPE_FIELDS.map(
             (f) =>
               `if(side IN (${MONTHLY_SIDES.filter((side) => side && side !== SIDE_OF[f])
                 .map(stringLiteral)
                 .join(', ')}), '', ${f}) AS ${f}_kept`,
           ).join(', ')},
           ${ROLLUP_SUMMED_COLUMNS.map((c) => `sum(${c})`).join(', ')}
         FROM inexact_daily ARRAY JOIN [${MONTHLY_SIDES.map(stringLiteral).join(', ')}] AS side
         WHERE day >= toDate(${stringLiteral(`${month}-01`)}) AND day < toDate(${stringLiteral(next < today ? next : today)})
           AND (side = '' OR dimension != '')
         GROUP BY ${key.join(', ')}`,
      );
      const staged = await this.tierState(staging, closed);
      const current = await this.tierState('inexact_monthly', closed);
      for (const [day, { sealed }] of staged) {
        if (sealed === 'ghost') {
          return;
        }
        const held = current.get(day)?.sealed ?? 'none';
        if (held !== 'none' && held !== 'ghost' && BigInt(held) > BigInt(sealed === 'none' ? 0 : sealed)) {
          return;
        }
      }
      await this.swap(
        `ALTER TABLE inexact_monthly REPLACE PARTITION ID ${stringLiteral(month.replace('-', ''))} FROM ${staging}`,
        'inexact_monthly',
        month.replace('-', ''),
      );
    } finally {
      await this.command(`DROP TABLE IF EXISTS ${staging}`);
    }
  }

  /**
   * The hash of every event id the day holds more than once, or `many` past MAX_LISTED_DUPLICATES. Grouping
   * the day's ids by their UInt64 hash was the cheapest lookup on 18.16 (bench/journal/pipeline.md,
   * "Sealing"), and the list's length does not depend on the ids'. An id that only shares its hash with a
   * duplicated one is read one row per id with it, which it is anyway (`rawRows`).
   */
  private async duplicatedIdHashes(day: string): Promise<Duplicates> {
    // As text: a UInt64 past 2^53 would lose digits as a JSON number.
    const hashes = await this.rows<{ h: string }>(
      `SELECT toString(cityHash64(event_id)) AS h FROM events_raw WHERE event_date = toDate(${stringLiteral(day)})
       GROUP BY cityHash64(event_id) HAVING count() > 1 LIMIT ${MAX_LISTED_DUPLICATES + 1}`,
    );
    return hashes.length > MAX_LISTED_DUPLICATES ? 'many' : hashes.map(({ h }) => BigInt(h).toString());
  }

  /** Per day of a sealed table (a tier, the monthly copy or a staging copy): its seal and live rows. */
  private async tierState(
    table: string,
    days: readonly string[],
  ): Promise<Map<string, { sealed: SealState; live: string }>> {
    const rows = await this.rows<SealStateRow>(sealStateSql(table, days));
    return new Map(rows.map((r) => [r.d, { sealed: sealStateOf(r), live: r.live }]));
  }

  private async sealDay(
    tier: SealedTier,
    day: string,
    mark: string,
    raw: string,
    sealed: SealState | undefined,
  ): Promise<void> {
    if (sealed === undefined || sealed === 'none') {
      // The views' rows this first swap replaces would come back without a marker (see the class):
      // a placeholder marker among them (mark 1, below any seal's) makes their return a second one.
      await this.command(
        `INSERT INTO ${tier.table} (day, ${tier.markerColumn}, seal_mark)
         VALUES (toDate(${stringLiteral(day)}), ${stringLiteral(markerToken('first'))}, 1)`,
      );
    }
    const staging = stagingName();
    await this.command(await this.stagingOf(staging, tier.table));
    try {
      await this.command(`INSERT INTO ${staging} (${tier.columns.join(', ')}) ${tier.select(day, raw)}`);
      await this.command(
        `INSERT INTO ${staging} (day, ${tier.markerColumn}, seal_mark)
         VALUES (toDate(${stringLiteral(day)}), ${stringLiteral(markerToken(mark))}, ${BigInt(mark)})`,
      );
      await this.swap(
        `ALTER TABLE ${tier.table} REPLACE PARTITION ID ${stringLiteral(day.replaceAll('-', ''))} FROM ${staging}`,
        tier.table,
        day.replaceAll('-', ''),
      );
    } finally {
      await this.command(`DROP TABLE IF EXISTS ${staging}`);
    }
  }

  /**
   * The CREATE of a staging table for `table`. On a cluster the copy must not be replicated: it
   * would share the table's ZooKeeper path.
   */
  private async stagingOf(staging: string, table: string): Promise<string> {
    if (!this.replicated) {
      return `CREATE TABLE ${staging} AS ${table}`;
    }
    let engine = this.stagingEngines.get(table);
    if (engine === undefined) {
      const [row] = await this.rows<{ engine_full: string }>(
        `SELECT engine_full FROM system.tables WHERE database = ${stringLiteral(this.database)} AND name = ${stringLiteral(table)}`,
      );
      const unreplicated = row === undefined ? undefined : unreplicatedEngine(row.engine_full);
      engine = unreplicated === undefined ? '' : ` ENGINE = ${unreplicated}`;
      this.stagingEngines.set(table, engine);
    }
    return `CREATE TABLE ${staging} AS ${table}${engine}`;
  }

  /** Whether this replica still has raw parts to fetch from the other replica of its shard. */
  private async rawPartsToFetch(): Promise<boolean> {
    const [{ n }] = await this.rows<{ n: string }>(
      `SELECT count() AS n FROM system.replication_queue
       WHERE database = ${stringLiteral(this.database)} AND table = 'events_raw' AND type = 'GET_PART'`,
    );
    return n !== '0';
  }

  /**
   * Staging tables of a sealer that died between CREATE and DROP. None is ever swapped in by another
   * sealer: each swaps only the table it filled, after filling it.
   */
  private async dropAbandonedStaging(): Promise<void> {
    const tables = await this.rows<{ name: string }>(
      `SELECT name FROM system.tables WHERE database = ${stringLiteral(this.database)} AND name LIKE 'seal%'`,
    );
    for (const { name } of tables) {
      const created = Number(/^seal_(?:month_)?(\d+)_[0-9a-f]+$/.exec(name)?.[1]);
      if (created > 0 && Date.now() - created >= this.stagingAbandonedAfterMs) {
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

  /**
   * A `REPLACE PARTITION`. On a replicated table it returns once every replica has done it
   * (`replication_alter_partitions_sync` 2): the other replica copies the swapped-in parts from this
   * one, and on 18.16 a part that a later swap replaced before it was copied can never be copied
   * (`Not found part … neither source table neither remote replicas`, seen in the cluster test),
   * which leaves an entry in that replica's queue for good. Waiting keeps one swap of a partition at
   * a time in flight on the shard.
   *
   * Nor is a partition swapped while a part of it waits for its INSERT's quorum (`quorumPending`): the
   * pass fails, and a later one seals it.
   */
  private async swap(query: string, table: string, partition: string): Promise<void> {
    if (!this.replicated) {
      await this.client.command({ query });
      return;
    }
    await this.exclusive(async () => {
      if (await this.quorumPending(table, partition)) {
        throw new ReportStoreException(
          ReportStoreErrorCode.Unavailable,
          `seal: a part of ${table} partition ${partition} waits for its INSERT's quorum; sealed at a later pass`,
        );
      }
      await this.client.command({ query, clickhouse_settings: { replication_alter_partitions_sync: 2 } });
    });
  }

  /**
   * Whether a part of `partition` written by an INSERT with a quorum is not yet on enough replicas
   * (`quorum/status` of the table in ZooKeeper names it). 18.16 counts the quorum only when another
   * replica fetches that very part: a swap that replaced the partition first took the part's fetch
   * out of the other replica's queue, the quorum never completed, and every later quorum INSERT into
   * the table was refused ("Quorum for previous write has not been satisfied yet"), for good (seen in
   * test/cluster/replica-insert-faults.test.ts after node 3's restart: exact_daily).
   */
  private async quorumPending(table: string, partition: string): Promise<boolean> {
    const [replica] = await this.rows<{ zookeeper_path: string }>(
      `SELECT zookeeper_path FROM system.replicas
       WHERE database = ${stringLiteral(this.database)} AND table = ${stringLiteral(table)}`,
    );
    if (replica === undefined) {
      return false;
    }
    const status = await this.rows<{ value: string }>(
      `SELECT value FROM system.zookeeper
       WHERE path = ${stringLiteral(`${replica.zookeeper_path}/quorum`)} AND name = 'status'`,
    );
    return status.some(({ value }) => value.includes(`part_name: ${partition}_`));
  }

  /**
   * Whether a replica of this shard is down (not active in ZooKeeper) for a table the sealer reads or
   * swaps: a swap would wait for it (`swap`), so the shard is not sealed until it is back; its days
   * keep the views' figures, and reports still answer from the live replica.
   */
  private async replicaDown(): Promise<boolean> {
    const [{ n }] = await this.rows<{ n: string }>(
      `SELECT count() AS n FROM system.replicas
       WHERE database = ${stringLiteral(this.database)} AND active_replicas < total_replicas
         AND table IN (${['events_raw', ...SEALED_TABLES].map(stringLiteral).join(', ')})`,
    );
    return n !== '0';
  }
}
