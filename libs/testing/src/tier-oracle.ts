import { MEASURE_NAMES } from '@app/report-model';

/** Sends a statement to a ClickHouse server and answers its TabSeparated lines. */
export type SqlLines = (query: string) => Promise<string[]>;

/**
 * `SqlLines` over HTTP to a server that the caller may kill and restart: a connection kept alive
 * to a server since killed fails once, and one that is starting refuses for a moment, so a failure
 * to connect is tried again (5 times, 300 ms apart). ClickHouse's own errors are thrown at once.
 */
export function clickHouseSql(url: () => string): SqlLines {
  const sql = async (query: string, tries = 5): Promise<string[]> => {
    const response = await fetch(`${url()}/`, { method: 'POST', body: query }).catch((error: unknown) => {
      if (tries <= 1) {
        throw error;
      }
      return undefined;
    });
    if (!response) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return sql(query, tries - 1);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`${query}: ${text}`);
    }
    return text.split('\n').filter(Boolean);
  };
  return (query) => sql(query);
}

const measureSums = (weight = '') => MEASURE_NAMES.map((m) => `sum(${m}${weight})`).join(', ');

/**
 * Each sealed table's measures per day (or per day within one dimension and side), beside a
 * recomputation from the raw events, one row per event id (`events_raw FINAL`), written here
 * without the sealer's code: the exact cube sums every event, the sample and each dimension of the
 * rollup and of each side of its monthly copy sum every sampled event once. Equal pairs mean every
 * tier holds each event once, whatever was replaced, killed or loaded again.
 */
export async function tiersAgainstRaw(
  sql: SqlLines,
  database: string,
): Promise<{ what: string; tier: string[]; raw: string[] }[]> {
  const perDay = (table: string, where = '1') =>
    sql(
      `SELECT toString(day), ${measureSums()} FROM ${database}.${table}
       WHERE ${where} GROUP BY day ORDER BY day FORMAT TSV`,
    );
  const exact = await sql(
    `SELECT toString(event_date), ${measureSums()} FROM ${database}.events_raw FINAL
     GROUP BY event_date ORDER BY event_date FORMAT TSV`,
  );
  const sampled = await sql(
    `SELECT toString(event_date), ${measureSums(' * sample_weight')} FROM ${database}.events_raw FINAL
     WHERE sample_weight > 0 GROUP BY event_date ORDER BY event_date FORMAT TSV`,
  );
  const pairs = [
    { what: 'exact_daily', tier: await perDay('exact_daily'), raw: exact },
    { what: 'inexact_sample', tier: await perDay('inexact_sample'), raw: sampled },
  ];
  // Every dimension of the rollup, and of each side of its copy, against the sample: one read each.
  const byGroup = async (table: string, group: string) => {
    const groups = new Map<string, string[]>();
    for (const line of await sql(
      `SELECT ${group}, toString(day), ${measureSums()} FROM ${database}.${table}
       WHERE dimension != '' GROUP BY ${group}, day ORDER BY ${group}, day FORMAT TSV`,
    )) {
      const cells = line.split('\t');
      const name = cells.slice(0, group.split(',').length).join(' ');
      groups.set(name, [...(groups.get(name) ?? []), cells.slice(group.split(',').length).join('\t')]);
    }
    return groups;
  };
  const rollup = await byGroup('inexact_daily', 'dimension');
  for (const [dimension, tier] of rollup) {
    pairs.push({ what: `inexact_daily ${dimension}`, tier, raw: sampled });
  }
  const copy = await byGroup('inexact_monthly', 'side, dimension');
  for (const side of ['', 'advertiser', 'publisher']) {
    for (const dimension of rollup.keys()) {
      pairs.push({
        what: `inexact_monthly ${side || 'rollup'} ${dimension}`,
        tier: copy.get(`${side} ${dimension}`) ?? [],
        raw: sampled,
      });
    }
  }
  return pairs;
}

/**
 * The closed days among `days` that some sealed table does not hold as sealed from the raw events
 * as they are now: exactly one marker, carrying the raw partition's highest block (+ 2 on a
 * replicated table, whose blocks are numbered from 0; the monthly copy: the rollup's marker), and
 * no rows the views added since. Read from the tables themselves.
 */
export async function unsealedDays(
  sql: SqlLines,
  database: string,
  days: readonly string[],
): Promise<string[]> {
  // A replicated table numbers a partition's blocks from 0: its seals carry the block + 2.
  const [engine] = await sql(
    `SELECT engine FROM system.tables WHERE database = '${database}' AND name = 'events_raw' FORMAT TSV`,
  );
  const above = engine?.startsWith('Replicated') ? 2 : 0;
  const raw = new Map(
    (
      await sql(
        `SELECT partition_id, toString(max(max_block_number) + ${above}) FROM system.parts
         WHERE database = '${database}' AND table = 'events_raw' AND active GROUP BY partition_id FORMAT TSV`,
      )
    ).map((line) => line.split('\t') as [string, string]),
  );
  const markers = async (table: string, where = '1') =>
    new Map(
      (
        await sql(
          `SELECT toString(day), toString(max(seal_mark)), countIf(seal_mark > 0), sum(live_rows)
           FROM ${database}.${table} WHERE ${where} GROUP BY day FORMAT TSV`,
        )
      ).map((line) => {
        const [day, mark, count, live] = line.split('\t');
        return [day, { mark, count: Number(count), live: Number(live) }] as const;
      }),
    );
  const unsealed = new Set<string>();
  const daily = await markers('inexact_daily');
  for (const table of ['exact_daily', 'inexact_sample', 'inexact_daily']) {
    const state = await markers(table);
    for (const day of days) {
      const s = state.get(day);
      if (!s || s.count !== 1 || s.live !== 0 || s.mark !== raw.get(day.replaceAll('-', ''))) {
        unsealed.add(day);
      }
    }
  }
  const monthly = await markers('inexact_monthly', "side = ''");
  for (const day of days) {
    const m = monthly.get(day);
    if (!m || m.count !== 1 || m.live !== 0 || m.mark !== daily.get(day)?.mark) {
      unsealed.add(day);
    }
  }
  return [...unsealed].sort();
}

/** The replicated tables of a shard that the oracles read: the raw events and every sealed table. */
const REPLICATED_TABLES = ['events_raw', 'exact_daily', 'inexact_sample', 'inexact_daily', 'inexact_monthly'];

/**
 * `tiersAgainstRaw` on each node of a cluster, on its own local tables: a shard's tiers must equal
 * the recomputation from the raw events of that shard (which hold every copy of its events), on
 * each of its replicas. Each replica first fetches what its shard's log holds (`SYSTEM SYNC
 * REPLICA`), so that a copy still on its way is not taken for a difference. Pairs named by node.
 */
export async function clusterTiersAgainstRaw(
  nodes: Readonly<Record<string, SqlLines>>,
  database: string,
): Promise<{ what: string; tier: string[]; raw: string[] }[]> {
  const pairs: { what: string; tier: string[]; raw: string[] }[] = [];
  for (const [node, sql] of Object.entries(nodes)) {
    for (const table of REPLICATED_TABLES) {
      await sql(`SYSTEM SYNC REPLICA ${database}.${table}`);
    }
    for (const pair of await tiersAgainstRaw(sql, database)) {
      pairs.push({ ...pair, what: `${node} ${pair.what}` });
    }
  }
  return pairs;
}
