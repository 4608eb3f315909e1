import 'reflect-metadata';
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadCatalog } from '@app/catalog';
import { generateDemoTraffic } from '@app/demo-traffic';
import { KafkaEventBus, TOPIC_BY_TYPE, toMessage, type AdEvent } from '@app/events';
import { ClickHouseReportStore } from '@app/report-store';
import { emptyMeasures, type Measures } from '@app/report-model';
import {
  FIXED_NOW,
  IngestProcess,
  PrivateStack,
  clickHouseSql,
  tiersAgainstRaw,
  unsealedDays,
  waitUntil,
} from '@app/testing';

/**
 * The fault run at scale (issue: billing numbers under faults): N events over closed days produced
 * into Kafka while the ingest process is killed with SIGKILL K times, Kafka is restarted once and
 * ClickHouse is killed and restarted once, all on a private stack. Then: events lost (raw ids
 * against produced ids), every tier against a recomputation from the raw events, the exact
 * campaign split against a hand count, the inexact tier against the truth, and the time from lag 0
 * to every closed day sealed.
 * `npm run bench:billing-faults -- --events 1000000 --kills 20`
 */
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    kills: { type: 'string', default: '20' },
    days: { type: 'string', default: '4' },
  },
});
const EVENTS = Number(values.events);
const KILLS = Number(values.kills);
const DAY_COUNT = Number(values.days);

const seconds = (ms: number) => Number((ms / 1000).toFixed(1));

/** The hand count: each measure of each campaign, from the events produced, without the store. */
function count(byCampaign: Map<string, Measures>, e: AdEvent): void {
  const m = byCampaign.get(e.campaign_id) ?? emptyMeasures();
  if (e.type === 'impression') {
    m[e.reopen ? 'reopens' : 'unique_impressions'] += 1;
  } else if (e.type === 'click') {
    m.clicks += 1;
  } else if (e.type === 'conversion') {
    m[e.attribution === 'post_view' ? 'post_view_conversions' : 'conversions'] += 1;
  }
  if (e.type === 'impression' || e.type === 'click' || e.type === 'conversion') {
    m.spend_micros += e.spend_micros;
    m.revenue_micros += e.revenue_micros;
  }
  byCampaign.set(e.campaign_id, m);
}

async function main(): Promise<void> {
  const id = `${process.pid}_${Date.now()}`;
  const database = `adx_bench_faults_${id}`;
  const prefix = `faults-${id}.`;
  const stack = await PrivateStack.create('bench-faults');
  console.log('starting a private Kafka and ClickHouse');
  stack.up('kafka', 'clickhouse');
  const sql = clickHouseSql(() => stack.clickhouseUrl);
  const rawIds = async () => Number((await sql(`SELECT uniqExact(event_id) FROM ${database}.events_raw`))[0]);
  const store = new ClickHouseReportStore({
    url: stack.clickhouseUrl,
    database,
    migrationsDir: 'clickhouse',
    sampleDenominator: 10,
    queryTimeoutMs: 120_000,
    rawRetentionMonths: 120,
  });
  const producer = new KafkaEventBus({
    brokers: stack.kafkaBrokers,
    clientId: `faults-producer-${id}`,
    topicPrefix: prefix,
    partitions: 4,
    spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
    spoolMaxBytes: 2 * 1024 * 1024 * 1024,
    concurrentPartitions: 2,
  });
  let ingest: IngestProcess | undefined;
  const startIngest = async () => {
    ingest = await IngestProcess.start({
      LOG_LEVEL: 'warn',
      INGEST_GROUP_ID: `faults-${id}`,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      KAFKA_TOPIC_PREFIX: prefix,
      KAFKA_CLIENT_ID: `faults-ingest-${id}`,
      KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
      CLICKHOUSE_URL: stack.clickhouseUrl,
      CLICKHOUSE_DATABASE: database,
    });
  };
  try {
    await store.migrate();
    const catalog = loadCatalog();
    const byCampaign = new Map<string, Measures>();
    const ids = new Set<string>();
    const days = new Set<string>();
    let truthClicks = 0;

    // Produced as fast as Kafka takes it, while the ingest is killed along the way.
    const producing = (async () => {
      const pending: AdEvent[] = [];
      const flush = async () => {
        for (const [type, topic] of Object.entries(TOPIC_BY_TYPE)) {
          const messages = pending.filter((e) => e.type === type).map(toMessage);
          if (messages.length > 0) {
            await producer.publish(topic, messages);
          }
        }
        pending.length = 0;
      };
      for (const event of generateDemoTraffic(catalog, {
        days: DAY_COUNT,
        eventsPerDay: Math.ceil(EVENTS / DAY_COUNT),
        now: FIXED_NOW,
        seed: 11,
      })) {
        if (ids.size >= EVENTS) {
          break;
        }
        if (!ids.has(event.event_id)) {
          ids.add(event.event_id);
          days.add(event.ts.slice(0, 10));
          count(byCampaign, event);
          truthClicks += event.type === 'click' ? 1 : 0;
        }
        pending.push(event);
        if (pending.length === 5_000) {
          await flush();
        }
      }
      await flush();
    })();

    await startIngest();
    const started = Date.now();
    const step = Math.floor(EVENTS / (KILLS + 2));
    for (let kill = 1; kill <= KILLS; kill += 1) {
      await waitUntil(`raw ids past ${kill * step}`, async () => (await rawIds()) >= kill * step, {
        timeoutMs: 600_000,
        everyMs: 250,
        retryErrors: true,
      });
      await ingest!.kill();
      if (kill === Math.ceil(KILLS / 3)) {
        console.log('restarting Kafka');
        stack.down('kafka');
        stack.up('kafka');
      }
      if (kill === Math.ceil((2 * KILLS) / 3)) {
        console.log('killing and restarting ClickHouse');
        stack.kill('clickhouse');
        stack.down('clickhouse');
        stack.up('clickhouse');
      }
      await startIngest();
    }
    await producing;
    console.log(`produced ${ids.size} events in ${seconds(Date.now() - started)} s`);
    await waitUntil('every event stored', async () => (await rawIds()) === ids.size, {
      timeoutMs: 1_800_000,
      everyMs: 250,
      retryErrors: true,
    });
    const caughtUp = Date.now();
    console.log(`lag 0 ${seconds(caughtUp - started)} s after the start`);
    await waitUntil(
      'sealed',
      async () => (await unsealedDays(sql, database, [...days].sort())).length === 0,
      { timeoutMs: 600_000, everyMs: 250, retryErrors: true },
    );
    const sealedAfter = Date.now() - caughtUp;
    await ingest!.kill();

    const pairs = await tiersAgainstRaw(sql, database);
    const wrong = pairs.filter((p) => JSON.stringify(p.tier) !== JSON.stringify(p.raw)).map((p) => p.what);
    const rows = await store.query({
      range: { start: '2026-01-01', end: '2026-11-21' },
      split: 'campaign_id',
      filters: [],
      scope: {},
      tier: 'exact',
    });
    const reported = Object.fromEntries(rows.map((r) => [String(r.key), r.measures]));
    assert.deepEqual(reported, Object.fromEntries(byCampaign), 'exact campaign split against the hand count');
    const inexact = await store.query({
      range: { start: '2026-01-01', end: '2026-11-21' },
      split: 'country',
      filters: [],
      scope: {},
      tier: 'inexact',
    });
    const inexactClicks = inexact.reduce((sum, r) => sum + r.measures.clicks, 0);
    const summary = {
      events: ids.size,
      kills: KILLS,
      lost: ids.size - (await rawIds()),
      tiersCompared: pairs.length,
      tiersWrong: wrong,
      exactCampaignSplit: 'equal to the hand count',
      inexactClicksVsTruth: `${inexactClicks} / ${truthClicks} (${(((inexactClicks - truthClicks) / truthClicks) * 100).toFixed(2)} %)`,
      lagZeroAfterStartS: seconds(caughtUp - started),
      sealedAfterLagZeroS: seconds(sealedAfter),
    };
    console.log(JSON.stringify(summary, null, 2));
    assert.equal(summary.lost, 0, 'events lost');
    assert.deepEqual(wrong, [], 'tiers against their recomputation');
  } finally {
    await ingest?.kill();
    await producer.close();
    await store.close();
    stack.down('kafka', 'clickhouse');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
