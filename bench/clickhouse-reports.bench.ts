import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { CatalogSource, loadCatalog } from '@app/catalog';
import { loadConfig } from '@app/config';
import { createLogger } from '@app/observability';
import { findSplit, type StoreQuery } from '@app/report-model';
import { buildClickHouseQuery, identifier, openReportStore, stringLiteral } from '@app/report-store';
import { listeningPort, startHttpApp } from '@app/runtime';
import { MemoryStateStore } from '@app/state-store';
import { ReportClient } from '@app/testing';
import { ReportingConfig, ReportingModule } from '@apps/reporting';

/**
 * Report latency on ClickHouse with tens of millions of events, over the API and as the bare
 * ClickHouse query, side by side; inexact splits also as the sample answers them (the rollup's
 * routing switched off), and every query's rows read from system.query_log. `npm run bench:clickhouse -- --events 50000000` (stack:up first).
 * The events are generated inside ClickHouse (INSERT ... SELECT FROM numbers) so that the
 * materialized views fill both tiers exactly as live inserts do; the closed days are then sealed
 * (which makes the rollup's monthly copy), and the time to copy a month again is printed. Inexact
 * splits are timed as the API reads them (the copy, then the daily rollup after its newest day),
 * on the daily rollup alone and on the sample (`--api-only`: the API requests alone). A database
 * that already holds
 * the events (a run on the same day) is timed again without generating them; `--drop` drops it at
 * the end (50 million events take 4 GiB).
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '50000000' },
    iterations: { type: 'string', default: '60' },
    url: { type: 'string', default: 'http://127.0.0.1:18123' },
    database: { type: 'string', default: 'adx_bench' },
    drop: { type: 'boolean', default: false },
    // API requests alone, one after the other: no bare, daily-rollup or sample query in between.
    'api-only': { type: 'boolean', default: false },
  },
});
const EVENTS = Number(values.events);
const ITERATIONS = Number(values.iterations);

function arrayLiteral(items: readonly string[]): string {
  return `[${items.map(stringLiteral).join(', ')}]`;
}

/** SQL that generates EVENTS rows of events_raw over the 30 days before today from the demo catalog. */
function generatorSql(): string {
  const catalog = loadCatalog();
  const slots = catalog.document.adSlots.map((s) => {
    const { template, publisher } = catalog.slotLineage(s.id);
    return [s.id, template!.id, publisher!.id, publisher!.domain, s.size];
  });
  const creatives = catalog.document.creatives.map((c) => {
    const { strategy, campaign, insertionOrder, advertiser } = catalog.creativeLineage(c.id);
    return [
      c.id,
      strategy!.id,
      campaign!.id,
      insertionOrder!.id,
      advertiser!.id,
      advertiser!.domain,
      campaign!.campaignType,
      campaign!.demandType,
    ];
  });
  const col = (rows: string[][], i: number) => arrayLiteral(rows.map((r) => r[i]));
  const pick = (array: string, seed: number) =>
    `${array}[1 + cityHash64(number, ${seed}) % length(${array})]`;
  const s = (i: number) => `${col(slots, i)}[1 + cityHash64(number, 1) % ${slots.length}]`;
  const c = (i: number) => `${col(creatives, i)}[1 + cityHash64(number, 2) % ${creatives.length}]`;
  const countries = arrayLiteral(['US', 'US', 'US', 'US', 'CA', 'GB', 'GB', 'DE', 'FR', 'AU']);
  return `INSERT INTO events_raw SELECT
    today() - 1 - (number % 30) AS event_date,
    toUInt8(cityHash64(number, 3) % 24) AS hour,
    toDateTime(event_date) + hour * 3600 AS ts,
    concat('bench-', toString(number)) AS event_id,
    multiIf(r < 970, 'impression', r < 995, 'click', 'conversion') AS type,
    'bench/0' AS source,
    number AS offset,
    ${s(2)} AS publisher_id, ${s(3)} AS publisher_domain, ${s(1)} AS template_id, ${s(0)} AS ad_slot_id,
    ${c(4)} AS advertiser_id, ${c(3)} AS insertion_order_id, ${c(2)} AS campaign_id, ${c(6)} AS campaign_type,
    ${c(7)} AS demand_type, ${c(1)} AS strategy_id, ${c(0)} AS creative_id, ${s(4)} AS size, ${c(5)} AS advertiser_domain,
    concat('plc-', toString(number % 97)) AS placement_id, concat('list-', toString(number % 5)) AS list_id,
    ${pick(arrayLiteral(['', 'interest', 'tier']), 4)} AS segment_key, ${pick(arrayLiteral(['', 'sports', 'finance', 'premium']), 5)} AS segment_value,
    ${pick(arrayLiteral(['18-20', '21-24', '25-34', '35-44', '45-54', '55-64', '65+']), 6)} AS age,
    ${pick(arrayLiteral(['male', 'female']), 7)} AS gender,
    ${pick(countries, 8)} AS country, ${pick(arrayLiteral(['NY', 'CA', 'TX', 'ON', 'ENG']), 9)} AS region,
    ${pick(arrayLiteral(['501', '803', '602', '']), 10)} AS metro, toString(10000 + cityHash64(number, 11) % 500) AS zip,
    ${pick(arrayLiteral(['Apple', 'Samsung', 'Google', 'Dell']), 12)} AS device_maker,
    ${pick(arrayLiteral(['iPhone 15', 'Galaxy S24', 'Pixel 8', 'Windows PC']), 13)} AS device_model,
    ${pick(arrayLiteral(['Phone', 'PC', 'Tablet', 'WebmailProxy', 'MediaCenter']), 14)} AS device_type,
    ${pick(arrayLiteral(['iOS', 'Android', 'Windows', 'macOS']), 15)} AS os,
    ${pick(arrayLiteral(['Apple Mail', 'Gmail', 'Outlook', 'Chrome']), 16)} AS browser,
    ${pick(arrayLiteral(['gmail.com', 'yahoo.com', 'outlook.com', 'icloud.com']), 17)} AS email_domain,
    toUInt16(if(type = 'impression', if(cityHash64(number, 18) % 10 = 0, 10, 0), 1)) AS sample_weight,
    toUInt64(type = 'impression' AND cityHash64(number, 19) % 100 >= 35) AS unique_impressions,
    toUInt64(type = 'impression' AND cityHash64(number, 19) % 100 < 35) AS reopens,
    toUInt64(type = 'click') AS clicks,
    toUInt64(type = 'conversion' AND r < 998) AS conversions,
    toUInt64(type = 'conversion' AND r >= 998) AS post_view_conversions,
    toUInt64(unique_impressions * 1500) AS spend_micros,
    toUInt64(unique_impressions * 1200) AS revenue_micros
  FROM (SELECT number, cityHash64(number) % 1000 AS r FROM system.numbers LIMIT ${EVENTS})`;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const store = await openReportStore({
    kind: 'clickhouse',
    url: values.url,
    database: values.database,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 60_000,
    rawRetentionMonths: 120,
  });
  const client = createClient({
    url: values.url,
    database: values.database,
    log: { level: ClickHouseLogLevel.OFF },
    request_timeout: 3_600_000,
  });
  const count = async (sql: string) =>
    Number((await (await client.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string }>())[0].n);
  const have = await count('SELECT count() AS n FROM events_raw');
  if (have < EVENTS) {
    const started = Date.now();
    await client.command({ query: 'TRUNCATE TABLE events_raw' });
    for (const t of ['exact_daily', 'inexact_daily', 'inexact_sample', 'ingested_offsets']) {
      await client.command({ query: `TRUNCATE TABLE ${t}` });
    }
    await client.command({
      query: generatorSql(),
      clickhouse_settings: { max_insert_block_size: '1048576', max_execution_time: 3600 },
    });
    console.log(
      `generated ${EVENTS} events in ClickHouse in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    await client.command({ query: 'OPTIMIZE TABLE exact_daily FINAL' });
    await client.command({ query: 'OPTIMIZE TABLE inexact_sample FINAL' });
    await client.command({ query: 'OPTIMIZE TABLE inexact_daily FINAL' });
  }
  // Closed days are sealed, as the ingest does every second: the rollup's monthly copy is made then.
  let started = Date.now();
  const sealed = await store.seal(new Date());
  console.log(
    `sealed ${sealed.sealed.length} day(s) (${sealed.final} already final) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  // What a seal adds to the inexact tier's finality: copying the newest month again.
  const [{ month }] = await (
    await client.query({
      query: `SELECT toString(max(toYYYYMM(day))) AS month FROM inexact_monthly`,
      format: 'JSONEachRow',
    })
  ).json<{ month: string }>();
  await client.command({ query: `ALTER TABLE inexact_monthly DROP PARTITION ID ${stringLiteral(month)}` });
  started = Date.now();
  await store.seal(new Date());
  console.log(`copied month ${month} of the rollup again in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const [{ through }] = await (
    await client.query({
      query: `SELECT toString(max(day)) AS through FROM inexact_monthly WHERE dimension = '' AND seal_mark > 0`,
      format: 'JSONEachRow',
    })
  ).json<{ through: string }>();
  const sizes = await (
    await client.query({
      query: `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = ${stringLiteral(values.database)} AND active AND table IN ('events_raw', 'exact_daily', 'inexact_daily', 'inexact_monthly', 'inexact_sample') GROUP BY table ORDER BY table`,
      format: 'JSONEachRow',
    })
  ).json<{ table: string; rows: string; bytes: string }>();

  const config = loadConfig(ReportingConfig, { REPORTING_PORT: '0', RATE_LIMIT_PER_SECOND: '10000' });
  const catalog = loadCatalog();
  const app = await startHttpApp(
    ReportingModule.forRoot({
      config,
      catalog: CatalogSource.of(catalog),
      reportStore: store,
      stateStore: new MemoryStateStore(),
    }),
    {
      host: '127.0.0.1',
      port: 0,
      logger: createLogger('warn', 'bench'),
      name: 'reporting',
    },
  );
  const api = new ReportClient(`http://127.0.0.1:${listeningPort(app)}`, () => new Date());
  const user = { id: 'demo-adv', token: 'demo-adv-token' };
  const today = new Date().toISOString().slice(0, 10);
  const day = (offset: number) =>
    new Date(Date.parse(`${today}T00:00:00Z`) - offset * 86_400_000).toISOString().slice(0, 10);
  const shapes: [string, string][] = [
    ['day split, 30 days (exact)', 'day'],
    ['campaign split (exact)', 'campaign_id'],
    ['country split (inexact)', 'country'],
    ['hour split (inexact)', 'hour'],
    ['day_hour split (inexact)', 'day_hour'],
    ['zip split (inexact)', 'zip'],
    ['device_model split (inexact)', 'device_model'],
  ];
  const lines: string[] = [];
  const readRows: string[] = [];
  for (const [name, split] of shapes) {
    const body = {
      type: 'advertiser',
      startDate: day(30),
      endDate: day(1),
      splits: [split],
      columns: ['impressions', 'clicks', 'ctr', 'spend'],
    };
    const query: StoreQuery = {
      range: { start: day(30), end: day(1) },
      split,
      filters: [],
      scope: { advertiserIds: catalog.advertiserIdsOf('acc-mg-1') },
      tier: findSplit(split)!.exactness,
    };
    const sql = buildClickHouseQuery(query, { monthlyThrough: through });
    // An inexact query the rollup answers, also as the daily rollup alone answers it (the path before
    // the monthly copy) and as the sample does (the path before the rollup).
    const dailySql = buildClickHouseQuery(query);
    const sampleSql = buildClickHouseQuery(query, { inexactRollup: false });
    const bare = async (text: string) =>
      client.query({ query: text, format: 'JSONEachRow' }).then((r) => r.json());
    for (let i = 0; i < 3; i += 1) {
      await api.json(user, body);
      await bare(sql);
    }
    const apiTimes: number[] = [];
    const bareTimes: number[] = [];
    const sampleTimes: number[] = [];
    const dailyTimes: number[] = [];
    const time = async (times: number[], run: () => Promise<unknown>) => {
      const t0 = process.hrtime.bigint();
      const result = await run();
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      return result;
    };
    for (let i = 0; i < ITERATIONS; i += 1) {
      const res = (await time(apiTimes, () => api.json(user, body))) as { status: number; text: string };
      if (res.status !== 200) {
        throw new Error(`${name}: ${res.status} ${res.text}`);
      }
      if (values['api-only']) {
        continue;
      }
      await time(bareTimes, () => bare(sql));
      if (dailySql !== sql) {
        await time(dailyTimes, () => bare(dailySql));
      }
      if (sampleSql !== dailySql) {
        await time(sampleTimes, () => bare(sampleSql));
      }
    }
    const f = (n: number) => `${n.toFixed(1)} ms`;
    for (const times of [apiTimes, bareTimes, dailyTimes, sampleTimes]) {
      times.sort((a, b) => a - b);
    }
    const p = (times: number[], q: number) => (times.length ? f(percentile(times, q)) : '-');
    lines.push(
      `| ${name} | ${p(apiTimes, 50)} | ${p(apiTimes, 99)} | ${p(bareTimes, 50)} | ${p(bareTimes, 99)} | ${bareTimes.length ? f(percentile(apiTimes, 50) - percentile(bareTimes, 50)) : '-'} | ${p(dailyTimes, 50)} | ${p(dailyTimes, 99)} | ${p(sampleTimes, 50)} | ${p(sampleTimes, 99)} |`,
    );
    // Rows read, from the query log: one more run of each path with logging on.
    for (const [path, text] of sampleSql === sql
      ? [['tier', sql]]
      : [
          ['monthly copy and rollup', sql],
          ['daily rollup', dailySql],
          ['sample', sampleSql],
        ]) {
      const id = `bench-${split}-${path}-${Date.now()}`;
      await client
        .query({ query: text, format: 'JSONEachRow', query_id: id, clickhouse_settings: { log_queries: 1 } })
        .then((r) => r.json());
      // 18.16's SYSTEM FLUSH LOGS may return before the row is written: asked again until it is.
      let logged: { read_rows: string; query_duration_ms: string } | undefined;
      for (let attempt = 0; attempt < 20 && !logged; attempt += 1) {
        if (attempt > 0) {
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        await client.command({ query: 'SYSTEM FLUSH LOGS' });
        [logged] = await (
          await client.query({
            query: `SELECT read_rows, query_duration_ms FROM system.query_log WHERE query_id = ${stringLiteral(id)} AND type = 2`,
            format: 'JSONEachRow',
          })
        ).json<{ read_rows: string; query_duration_ms: string }>();
      }
      readRows.push(
        `| ${name} | ${path} | ${logged?.read_rows ?? '?'} | ${logged?.query_duration_ms ?? '?'} ms |`,
      );
    }
  }
  await app.close();
  await store.close();
  if (values.drop) {
    await client.command({ query: `DROP DATABASE IF EXISTS ${identifier(values.database)}` });
  }
  await client.close();
  console.log(
    `\n${EVENTS} events, ${ITERATIONS} requests per shape, alternating API and bare queries; monthly copy through ${through}\n`,
  );
  console.log(
    '| report | API p50 | API p99 | bare p50 | bare p99 | API overhead (p50) | bare on the daily rollup p50 | p99 | bare on the sample p50 | p99 |\n|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const line of lines) {
    console.log(line);
  }
  console.log('\n| report | read from | read_rows | duration |\n|---|---|---|---|');
  for (const line of readRows) {
    console.log(line);
  }
  console.log('\n| table | rows | on disk |\n|---|---|---|');
  for (const s of sizes) {
    console.log(`| ${s.table} | ${Number(s.rows)} | ${(Number(s.bytes) / 1024 / 1024).toFixed(1)} MiB |`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
