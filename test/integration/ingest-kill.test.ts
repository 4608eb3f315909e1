import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AssignerProtocol, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EVENT_TOPICS, KafkaEventBus, TOPIC_BY_TYPE, toMessage, type AdEvent } from '@app/events';
import type { ClickHouseReportStore } from '@app/report-store';
import {
  STACK,
  demoEvents,
  expectedBySplit,
  freePort,
  requireOrSkip,
  testClickHouseStore,
  waitUntil,
} from '@app/testing';

const ROOT = path.resolve(__dirname, '../..');
const INGEST = path.join(ROOT, 'dist/apps/ingest/src/main.js');
const RANGE = { start: '2026-01-01', end: '2026-11-21' };
/** Kills tried until one lands inside a batch: each gets a fifth of the events to interrupt. */
const ATTEMPTS = 5;

/**
 * Two ingest processes of one group on one host, as an operator runs them, over the stack's Kafka
 * and ClickHouse: one is killed with SIGKILL while it stores a batch, then started again. The
 * kill must be shown to have landed mid-batch (events of the victim's partitions stored past
 * the offsets Kafka has for them, so that they come again), and the reports must equal a hand
 * count once the ingests' own sealers have run, with no help from the test.
 */
describe.runIf(
  requireOrSkip(
    inject('stack').kafka && inject('stack').clickhouse,
    'Kafka and ClickHouse (npm run stack:up)',
  ),
)('ingest processes killed with SIGKILL', () => {
  const id = `${process.pid}_${Date.now()}`;
  const database = `adx_test_${id}_kill`;
  const prefix = `kill-${id}.`;
  const group = `kill-${id}`;
  const children: { child: ChildProcess; port: number; exited: Promise<NodeJS.Signals | null> }[] = [];
  let admin: Admin;

  async function ingestProcess(name: string) {
    const port = await freePort();
    const child = spawn(process.execPath, [INGEST], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        LOG_LEVEL: 'warn',
        INGEST_PORT: String(port),
        INGEST_GROUP_ID: group,
        KAFKA_BROKERS: STACK.kafkaBrokers,
        KAFKA_TOPIC_PREFIX: prefix,
        KAFKA_CLIENT_ID: clientId(name),
        KAFKA_SPOOL_DIR: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
        CLICKHOUSE_URL: STACK.clickhouseUrl,
        CLICKHOUSE_DATABASE: database,
        SEAL_INTERVAL_MS: '500',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    const running = { child, port, exited };
    children.push(running);
    return running;
  }
  const clientId = (name: string) => `kill-${name}-${id}`;

  beforeAll(async () => {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'ignore' });
    admin = new Kafka({ brokers: STACK.kafkaBrokers.split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
  }, 120_000);

  afterAll(async () => {
    for (const { child } of children) {
      child.kill('SIGKILL');
    }
    await admin?.disconnect();
  });

  it('kill -9 of one of two ingests inside a batch and a restart: the stored part comes again and is left out; exact once the ingests have sealed', async () => {
    const events = demoEvents(3, 8000);
    const producer = new KafkaEventBus({
      brokers: STACK.kafkaBrokers.split(','),
      clientId: `kill-producer-${id}`,
      topicPrefix: prefix,
      partitions: 4,
      spoolDir: mkdtempSync(path.join(tmpdir(), 'adx-spool-')),
      spoolMaxBytes: 256 * 1024 * 1024,
      concurrentPartitions: 2,
    });
    const store = testClickHouseStore(database);
    await store.migrate();
    const parts = Array.from({ length: ATTEMPTS }, (_, i) =>
      events.slice(
        Math.floor((i * events.length) / ATTEMPTS),
        Math.floor(((i + 1) * events.length) / ATTEMPTS),
      ),
    );

    let victim = await ingestProcess('a0');
    await ingestProcess('b');
    let published = 0;
    const kills: {
      rowsAtKill: number;
      published: number;
      duringInsert: boolean;
      storedPastCommit: string[];
    }[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const victimId = clientId(`a${attempt}`);
      // The victim holds partitions before the group is given this part of the events.
      await waitUntil(`partitions for ${victimId}`, async () => (await partitionsOf(victimId)).length > 0, {
        timeoutMs: 60_000,
        retryErrors: true,
      });
      await publish(producer, parts[attempt]);
      published += parts[attempt].length;
      const mine = await partitionsOf(victimId);
      // Killed while one of its INSERTs is under way with rows read, past the first 500 of this part.
      const floor = published - parts[attempt].length + 500;
      const duringInsert = await waitUntil(
        'an INSERT under way past the floor',
        async () => (await rawRows()) > floor && (await inserting(victim.child.pid!)),
        { timeoutMs: 20_000, retryErrors: true },
      ).then(
        () => true,
        () => false,
      );
      const rowsAtKill = await rawRows();
      victim.child.kill('SIGKILL');
      expect(await victim.exited).toBe('SIGKILL');
      // ClickHouse ends a cut-off INSERT at its last whole line: wait for it to be stored.
      let storedPastCommit: string[] = [];
      await waitUntil(
        'rows stored past the commit',
        async () => {
          storedPastCommit = await storedPastCommitted(mine);
          return storedPastCommit.length > 0;
        },
        { timeoutMs: 3_000, retryErrors: true },
      ).catch(() => undefined);
      kills.push({ rowsAtKill, published, duringInsert, storedPastCommit });
      victim = await ingestProcess(`a${attempt + 1}`);
      if (storedPastCommit.length > 0) {
        break;
      }
    }
    for (let attempt = kills.length; attempt < ATTEMPTS; attempt += 1) {
      await publish(producer, parts[attempt]);
    }
    console.log(`kills: ${JSON.stringify(kills)}`);
    // The fault took effect: killed while rows were missing, with stored events of its partitions
    // that Kafka would hand out again.
    const effective = kills.find((k) => k.storedPastCommit.length > 0);
    expect(effective, 'a kill inside a batch').toBeDefined();
    expect(effective!.rowsAtKill).toBeLessThan(effective!.published);

    const truth = Object.fromEntries(expectedBySplit(events, 'campaign_id'));
    await waitUntil(
      'the reports equal to the hand count',
      async () => equal(await byCampaign(store), truth),
      { timeoutMs: 90_000, retryErrors: true },
    );
    expect(await byCampaign(store)).toEqual(truth);
    // ...and those events came again to the group's live ingests, which left them out.
    const replayed = await Promise.all(
      children
        .filter((c) => c.child.exitCode === null && c.child.signalCode === null)
        .map((c) => replayedBy(c.port)),
    );
    expect(replayed.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    await producer.close();
    await store.close();
  }, 240_000);

  async function clickHouse(query: string): Promise<string> {
    const response = await fetch(`${STACK.clickhouseUrl}/`, { method: 'POST', body: query });
    if (!response.ok) {
      throw new Error(`${query}: ${await response.text()}`);
    }
    return response.text();
  }

  async function rawRows(): Promise<number> {
    return Number(await clickHouse(`SELECT count() FROM ${database}.events_raw`).catch(() => '0'));
  }

  /** The sources (`topic/partition`) a member holds, by its client id, as the group coordinator says. */
  async function partitionsOf(member: string): Promise<string[]> {
    const { groups } = await admin.describeGroups([group]);
    const sources: string[] = [];
    for (const m of groups[0]?.members ?? []) {
      if (m.clientId !== member || m.memberAssignment.length === 0) {
        continue;
      }
      const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      for (const [topic, partitions] of Object.entries(decoded?.assignment ?? {})) {
        sources.push(...partitions.map((p) => `${topic}/${p}`));
      }
    }
    return sources;
  }

  /**
   * The sources among `sources` whose events are stored past the group's committed offset: the
   * store records with each row the offset its source may be read from (`ingested_offsets`),
   * Kafka the one the group committed.
   */
  async function storedPastCommitted(sources: readonly string[]): Promise<string[]> {
    const stored = new Map(
      (await clickHouse(`SELECT source, max(last_offset) FROM ${database}.ingested_offsets GROUP BY source`))
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split('\t'))
        .map(([source, offset]) => [source, BigInt(offset)]),
    );
    const committed = new Map<string, bigint>();
    for (const { topic, partitions } of await admin.fetchOffsets({
      groupId: group,
      topics: EVENT_TOPICS.map((t) => `${prefix}${t}`),
    })) {
      for (const { partition, offset } of partitions) {
        committed.set(`${topic}/${partition}`, BigInt(offset) < 0n ? 0n : BigInt(offset));
      }
    }
    return sources.filter((s) => (stored.get(s) ?? 0n) > (committed.get(s) ?? 0n));
  }

  /**
   * Whether ClickHouse is running an INSERT sent by process `pid`: the client ports of the
   * queries under way (system.processes) against the process's TCP sockets (Linux's /proc).
   */
  async function inserting(pid: number): Promise<boolean> {
    // Only the process's own sockets are looked at: no other process's INSERT can match.
    const running = await clickHouse(
      "SELECT port FROM system.processes WHERE query LIKE 'INSERT INTO%events_raw%' AND read_rows > 0",
    ).catch(() => '');
    const ports = new Set(running.split('\n').filter(Boolean).map(Number));
    if (ports.size === 0) {
      return false;
    }
    return localPortsOf(pid, Number(new URL(STACK.clickhouseUrl).port)).some((port) => ports.has(port));
  }

  /**
   * The events a running ingest left out as already stored, from its /metrics. The ingest started
   * after the last kill may not listen yet when the reports are already exact (its partner stored
   * everything): its answer is waited for.
   */
  async function replayedBy(port: number): Promise<number> {
    const response = await waitUntil(
      `the metrics of the ingest on ${port}`,
      () => fetch(`http://127.0.0.1:${port}/metrics`),
      { timeoutMs: 30_000, retryErrors: true },
    );
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith('adx_ingest_replayed_events_total'));
    return line ? Number(line.split(' ').pop()) : 0;
  }
});

/**
 * The local ports of a process's TCP connections to `remotePort`: its socket inodes
 * (/proc/pid/fd) looked up in /proc/pid/net/tcp and tcp6.
 */
function localPortsOf(pid: number, remotePort: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      const target = (() => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return '';
        }
      })();
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) {
        inodes.add(inode);
      }
    }
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const lines = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (
        fields.length > 9 &&
        inodes.has(fields[9]) &&
        parseInt(fields[2].split(':')[1], 16) === remotePort
      ) {
        ports.push(parseInt(fields[1].split(':')[1], 16));
      }
    }
  }
  return ports;
}

async function publish(bus: KafkaEventBus, events: readonly AdEvent[]): Promise<void> {
  for (const [type, topic] of Object.entries(TOPIC_BY_TYPE)) {
    const messages = events.filter((e) => e.type === type).map(toMessage);
    for (let i = 0; i < messages.length; i += 500) {
      await bus.publish(topic, messages.slice(i, i + 500));
    }
  }
}

async function byCampaign(store: ClickHouseReportStore): Promise<Record<string, unknown>> {
  const rows = await store.query({
    range: RANGE,
    split: 'campaign_id',
    filters: [],
    scope: {},
    tier: 'exact',
  });
  return Object.fromEntries(rows.map((r) => [r.key, r.measures]));
}

function equal(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}
