import 'reflect-metadata';
import type { TestProject } from 'vitest/node';
import { STACK, reachable } from '@app/testing';

declare module 'vitest' {
  export interface ProvidedContext {
    stack: { kafka: boolean; clickhouse: boolean; redis: boolean };
  }
}

/** Probes the servers of `npm run stack:up` once, so that suites can decide at collection time. */
export default async function setup(project: TestProject): Promise<void> {
  const [kafka, clickhouse, redis] = await Promise.all([
    reachable(STACK.kafkaBrokers.split(',')[0]),
    reachable(STACK.clickhouseUrl),
    reachable(STACK.redisUrl),
  ]);
  if (clickhouse) {
    await dropTestDatabases();
  }
  project.provide('stack', { kafka, clickhouse, redis });
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
