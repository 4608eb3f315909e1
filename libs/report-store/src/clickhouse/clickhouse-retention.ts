import type { ClickHouseClient } from '@clickhouse/client';
import { retentionCutoff } from '../event-rollup';
import { stringLiteral } from './clickhouse-literal';
import { classify } from './clickhouse-errors';
import { dayOfPartition } from './closed-day.sealer';

/**
 * Retention by partition drops (18.16 has no TTL): the raw days before the first day of the month
 * `months` before `now`. The tiers keep those days; they are no longer resealed.
 */
export async function dropExpiredRaw(
  client: ClickHouseClient,
  database: string,
  months: number,
  now: Date,
): Promise<string[]> {
  const oldest = retentionCutoff(now, months).replaceAll('-', '');
  try {
    const result = await client.query({
      query: `SELECT DISTINCT partition_id FROM system.parts WHERE database = ${stringLiteral(database)} AND table = 'events_raw' AND active`,
      format: 'JSONEachRow',
    });
    const dropped: string[] = [];
    for (const { partition_id: id } of await result.json<{ partition_id: string }>()) {
      if (/^\d{8}$/.test(id) && id < oldest) {
        await client.command({ query: `ALTER TABLE events_raw DROP PARTITION ID ${stringLiteral(id)}` });
        dropped.push(dayOfPartition(id));
      }
    }
    return dropped.sort();
  } catch (error) {
    throw classify(error, 'retention');
  }
}
