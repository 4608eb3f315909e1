import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ClickHouseReportStore, ClickHouseStoreOptions } from '@app/report-store';
import { testClickHouseStore } from './clickhouse-fixtures';
import { freePort } from './private-stack';

/** The ClickHouse nodes of the cluster topology: nodes 1-2 are shard 01, nodes 3-4 shard 02. */
export const CLUSTER_CLICKHOUSE_NODES = [1, 2, 3, 4] as const;
/** The Kafka brokers (KRaft node ids) of the cluster topology. */
export const CLUSTER_KAFKA_NODES = [1, 2, 3] as const;
/** The cluster's name in `remote_servers` (stack/clickhouse-cluster.xml). */
export const CLUSTER_NAME = 'adx';

/** The port variables of stack/cluster.env. */
const CLUSTER_PORT_VARIABLES = [
  'CLUSTER_ZK_PORT',
  'CLUSTER_REDIS_PORT',
  ...CLUSTER_CLICKHOUSE_NODES.flatMap((n) => [
    `CLUSTER_CH${n}_HTTP_PORT`,
    `CLUSTER_CH${n}_TCP_PORT`,
    `CLUSTER_CH${n}_INTERSERVER_PORT`,
  ]),
  ...CLUSTER_KAFKA_NODES.flatMap((n) => [`CLUSTER_KAFKA${n}_PORT`, `CLUSTER_KAFKA${n}_CONTROLLER_PORT`]),
];

export type ClusterNode =
  | 'zookeeper'
  | 'redis'
  | `clickhouse${(typeof CLUSTER_CLICKHOUSE_NODES)[number]}`
  | `kafka${(typeof CLUSTER_KAFKA_NODES)[number]}`;

/**
 * A cluster topology of its own (stack/cluster-up.sh) for a test: its own data folder and ports,
 * each `PRIVATE_<variable>` from the environment when set (e.g. `PRIVATE_CLUSTER_ZK_PORT`), else a
 * free port the kernel picks, so that it never touches the development stack or its cluster. The
 * scripts run with `env` (the process's by default), the folder and the ports.
 */
export class ClusterStack {
  private constructor(
    readonly dir: string,
    readonly ports: Readonly<Record<string, string>>,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async create(name: string, env: NodeJS.ProcessEnv = process.env): Promise<ClusterStack> {
    const ports: Record<string, string> = {};
    const taken = new Set<string>();
    for (const variable of CLUSTER_PORT_VARIABLES) {
      let port = env[`PRIVATE_${variable}`];
      // The kernel may hand a port it just handed (it was closed again): nineteen must differ.
      while (port === undefined || taken.has(port)) {
        port = String(await freePort());
      }
      taken.add(port);
      ports[variable] = port;
    }
    return new ClusterStack(mkdtempSync(path.join(tmpdir(), `adx-${name}-cluster-`)), ports, env);
  }

  /** The HTTP address of one ClickHouse node. */
  clickhouseUrl(node: (typeof CLUSTER_CLICKHOUSE_NODES)[number]): string {
    return `http://127.0.0.1:${this.ports[`CLUSTER_CH${node}_HTTP_PORT`]}`;
  }

  /** The shard ClickHouse node `node` belongs to, as its `{shard}` macro spells it. */
  static shardOf(node: (typeof CLUSTER_CLICKHOUSE_NODES)[number]): string {
    return `0${Math.ceil(node / 2)}`;
  }

  /** The shards' replicas (HTTP addresses), as a store's `cluster` and CLICKHOUSE_SHARDS name them. */
  get shards(): string[][] {
    return [
      [this.clickhouseUrl(1), this.clickhouseUrl(2)],
      [this.clickhouseUrl(3), this.clickhouseUrl(4)],
    ];
  }

  /**
   * A store on the cluster as the cluster tests open it (not migrated): `testClickHouseStore`'s
   * defaults, through node 1, queries of 30 s (a Distributed read waits on every shard), and what
   * `options` changes (`cluster: undefined` for the single-server schema on node 1).
   */
  store(database: string, options: Partial<ClickHouseStoreOptions> = {}): ClickHouseReportStore {
    return testClickHouseStore(database, {
      url: this.clickhouseUrl(1),
      queryTimeoutMs: 30_000,
      cluster: { name: CLUSTER_NAME, shards: this.shards },
      ...options,
    });
  }

  /** The same store (without `options`) as the apps' variables name it. */
  storeEnv(database: string): Record<string, string> {
    return {
      CLICKHOUSE_URL: this.clickhouseUrl(1),
      CLICKHOUSE_DATABASE: database,
      CLICKHOUSE_CLUSTER: CLUSTER_NAME,
      CLICKHOUSE_SHARDS: this.shards.map((replicas) => replicas.join(',')).join(';'),
    };
  }

  kafkaBroker(node: (typeof CLUSTER_KAFKA_NODES)[number]): string {
    return `127.0.0.1:${this.ports[`CLUSTER_KAFKA${node}_PORT`]}`;
  }

  get kafkaBrokers(): string[] {
    return CLUSTER_KAFKA_NODES.map((n) => this.kafkaBroker(n));
  }

  /** Starts the named nodes (all when none) and waits until they answer. */
  up(...nodes: ClusterNode[]): void {
    this.script('cluster-up', nodes);
  }

  down(...nodes: ClusterNode[]): void {
    this.script('cluster-down', nodes);
  }

  /** SIGKILL, the way a crash or the OOM killer stops a server: no shutdown of its own. */
  kill(node: ClusterNode): void {
    const pidFile = path.join(this.dir, 'cluster', node, `${node.replace(/\d$/, '')}.pid`);
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
  }

  /**
   * The brokers the active controller fenced for a session timed out, and when (ms since the epoch),
   * as the brokers' logs say (stack/kafka-cluster-log4j.properties keeps ReplicationControlManager at
   * INFO). A fence of a broker that was not killed is a live broker taken for dead: a session too
   * short for the machine.
   */
  kafkaFences(): { broker: number; at: number; line: string }[] {
    const fences: { broker: number; at: number; line: string }[] = [];
    for (const n of CLUSTER_KAFKA_NODES) {
      for (const line of this.kafkaLogLines(n)) {
        const fence = /^\[(\S+) (\S+)\] INFO .*Fencing broker (\d+) because its session has timed out/.exec(
          line,
        );
        if (fence) {
          // log4j's %d, in the JVM's zone: UTC on our machines.
          const at = Date.parse(`${fence[1]}T${fence[2].replace(',', '.')}Z`);
          fences.push({ broker: Number(fence[3]), at, line });
        }
      }
    }
    return fences;
  }

  /**
   * The broker that is the active KRaft controller now: the one that last logged becoming it (the
   * highest epoch; stack/kafka-cluster-log4j.properties keeps QuorumController at INFO). Killing it
   * costs an election before the dead broker can be fenced.
   */
  kafkaActiveController(): number | undefined {
    let active: { broker: number; epoch: number } | undefined;
    for (const n of CLUSTER_KAFKA_NODES) {
      for (const line of this.kafkaLogLines(n)) {
        const claim = /Becoming the active controller at epoch (\d+)/.exec(line);
        if (claim && (!active || Number(claim[1]) > active.epoch)) {
          active = { broker: n, epoch: Number(claim[1]) };
        }
      }
    }
    return active?.broker;
  }

  /** The lines of a broker's log, this life's and the one before (a restart moves server.log to server.log.prev). */
  private kafkaLogLines(node: (typeof CLUSTER_KAFKA_NODES)[number]): string[] {
    return ['server.log.prev', 'server.log'].flatMap((file) => {
      const at = path.join(this.dir, 'cluster', `kafka${node}`, 'log', file);
      return existsSync(at) ? readFileSync(at, 'utf8').split('\n') : [];
    });
  }

  /** Stops every node and removes the data folder. */
  destroy(): void {
    try {
      this.down();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private script(script: 'cluster-up' | 'cluster-down', nodes: readonly ClusterNode[]): void {
    execFileSync('bash', [`stack/${script}.sh`, ...nodes], {
      env: { ...this.env, STACK_DIR: this.dir, ...this.ports },
      stdio: 'pipe',
      timeout: 300_000,
    });
  }
}
