import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { PrivateStack, STACK, isCi, reachable, stackServersInstalled } from '@app/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: { kafka: boolean; clickhouse: boolean; redis: boolean };
  }
}

const ROOT = path.resolve(__dirname, '../..');

interface Servers {
  readonly kafka: boolean;
  readonly clickhouse: boolean;
  readonly redis: boolean;
}

/** What the projects of one run share: their setups run in this one process, each with its own module. */
interface SharedStack {
  users: number;
  readonly ready: Promise<{ servers: Servers; started?: PrivateStack }>;
}
const SHARED = Symbol.for('adx.test-stack');
const shared = globalThis as unknown as Record<typeof SHARED, SharedStack | undefined>;

/**
 * The servers of `npm run stack:up`, probed once for the whole run, so that suites can decide at
 * collection time. When one is not reachable at its address (KAFKA_BROKERS, CLICKHOUSE_URL,
 * REDIS_URL or the stack's defaults) and the servers are installed, a private stack of all three
 * is started for this run (stack/stack-up.sh, on free ports and a temporary folder: no other stack
 * is touched) and stopped when the run ends; the test processes get its addresses. CI starts its
 * stack first, which is then used as it is. TEST_STACK_AUTOSTART=0 leaves it to the skips (and,
 * under CI, to the failures).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = (shared[SHARED] ??= { users: 0, ready: prepare() });
  run.users += 1;
  const { servers, started } = await run.ready;
  project.provide('stack', servers);
  return async () => {
    run.users -= 1;
    if (run.users === 0 && started) {
      shared[SHARED] = undefined;
      await script(started, 'stack-down').catch(() => undefined);
      rmSync(started.dir, { recursive: true, force: true });
    }
  };
}

async function prepare(): Promise<{ servers: Servers; started?: PrivateStack }> {
  const servers = await probe();
  if (
    (servers.kafka && servers.clickhouse && servers.redis) ||
    process.env.TEST_STACK_AUTOSTART === '0' ||
    !installed()
  ) {
    if (servers.clickhouse) {
      await dropTestDatabases();
    }
    return { servers };
  }
  const started = await PrivateStack.create('npm-test');
  const addresses = {
    KAFKA_BROKERS: started.kafkaBrokers.join(','),
    CLICKHOUSE_URL: started.clickhouseUrl,
    REDIS_URL: `redis://127.0.0.1:${started.ports.REDIS_PORT}`,
  };
  const missing = Object.entries(servers)
    .filter(([, up]) => !up)
    .map(([name]) => name)
    .join(', ');
  process.stdout.write(
    `[stack] ${missing} not reachable: starting Kafka, ClickHouse and Redis for this run (${Object.entries(
      addresses,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}), stopped when it ends\n`,
  );
  try {
    await script(started, 'stack-up');
  } catch (error) {
    // Half started: stop what did start; the suites then skip (or fail under CI) as before.
    await script(started, 'stack-down').catch(() => undefined);
    rmSync(started.dir, { recursive: true, force: true });
    process.stdout.write(`[stack] could not start the private stack: ${(error as Error).message}\n`);
    if (isCi()) {
      throw error;
    }
    return { servers };
  }
  // The test processes, started after this, read their addresses from the environment (STACK).
  Object.assign(process.env, addresses);
  STACK.kafkaBrokers = addresses.KAFKA_BROKERS;
  STACK.clickhouseUrl = addresses.CLICKHOUSE_URL;
  STACK.redisUrl = addresses.REDIS_URL;
  return { servers: await probe(), started };
}

async function probe(): Promise<Servers> {
  const [kafka, clickhouse, redis] = await Promise.all([
    reachable(STACK.kafkaBrokers.split(',')[0]),
    reachable(STACK.clickhouseUrl),
    reachable(STACK.redisUrl),
  ]);
  return { kafka, clickhouse, redis };
}

/** The three servers, and Kafka's jars or Maven to fetch them (stack-up.sh's needs). */
function installed(): boolean {
  const jars = existsSync(
    path.join(process.env.KAFKA_LIBS_DIR ?? path.join(ROOT, '.stack/kafka-libs'), '.complete'),
  );
  return stackServersInstalled() && (jars || onPath('mvn'));
}

function onPath(program: string): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir !== '' && existsSync(path.join(dir, program)));
}

/** stack-up.sh or stack-down.sh for the private stack, without blocking this process (the other projects run meanwhile). */
function script(stack: PrivateStack, name: 'stack-up' | 'stack-down'): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [path.join(ROOT, 'stack', `${name}.sh`)],
      {
        cwd: ROOT,
        env: { ...process.env, STACK_TOPOLOGY: 'single', STACK_DIR: stack.dir, ...stack.ports },
        timeout: 600_000,
      },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`${name}.sh: ${stderr.trim() || error.message}`)) : resolve(),
    );
  });
}

/**
 * Test databases of earlier runs, so that they do not pile up on a developer's stack. A name
 * starts with the pid of the test process that made it (`adx_test_<pid>_...`): only those of
 * processes that are gone are dropped, so that two runs at once never drop each other's.
 */
async function dropTestDatabases(): Promise<void> {
  const list = await fetch(`${STACK.clickhouseUrl}/`, {
    method: 'POST',
    body: "SELECT name FROM system.databases WHERE name LIKE 'adx\\_test\\_%'",
  });
  for (const name of (await list.text()).split('\n').filter((n) => /^adx_test_\w+$/.test(n))) {
    const pid = /^adx_test_(\d+)_/.exec(name)?.[1];
    if (pid !== undefined && isAlive(Number(pid))) {
      continue;
    }
    await fetch(`${STACK.clickhouseUrl}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${name}` });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but is another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
