import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterStack, PrivateStack, freePort, requireOrSkip, stackServersInstalled } from '@app/testing';

/** Runs `start`, which must throw; its error's output and how long it took to fail. */
function failure(start: () => void): { output: string; seconds: number } {
  const began = Date.now();
  try {
    start();
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    return { output: `${stdout ?? ''}${stderr ?? ''}`, seconds: (Date.now() - began) / 1000 };
  }
  throw new Error('the stack script succeeded');
}

/**
 * A server the stack scripts start that exits at once must fail the script at once, naming the
 * server and showing its log: the wait used to go on for its whole bound (60 s for the single
 * ClickHouse, 120 s for ZooKeeper, 180 s for a broker) on a port nothing would ever open.
 */
describe.runIf(
  requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java for a private stack'),
)('stack:up when a server it started exits at start', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) {
      cleanup();
    }
  });

  it('stack-up.sh: a ClickHouse whose native port is its HTTP port (bound by then) fails the run within seconds, named with its log', async () => {
    // Free when the script asks (refuse_taken passes); the server's second listener finds it
    // taken by its first.
    const port = String(await freePort());
    const stack = await PrivateStack.create('exits', {
      PRIVATE_CH_HTTP_PORT: port,
      PRIVATE_CH_TCP_PORT: port,
    });
    cleanups.push(() => {
      stack.down('clickhouse');
      rmSync(stack.dir, { recursive: true, force: true });
    });
    const { output, seconds } = failure(() => stack.up('clickhouse'));
    expect(output).toMatch(/clickhouse exited at start \(status \d+; log: .*clickhouse\.err\.log\)/);
    expect(output).toMatch(/Address already in use/);
    expect(seconds).toBeLessThan(30);
  });

  it('cluster-up.sh: a ZooKeeper whose JVM refuses its heap fails the run within seconds, named with its log', async () => {
    // 1 MB of heap under the 64 MB it starts with: the JVM exits before ZooKeeper runs.
    const stack = await ClusterStack.create('exits', { ...process.env, CLUSTER_ZK_HEAP_MB: '1' });
    cleanups.push(() => stack.destroy());
    const { output, seconds } = failure(() => stack.up('zookeeper'));
    expect(output).toMatch(/zookeeper exited at start \(status 1; log: .*stdout\.log\)/);
    expect(output).toMatch(/heap size/);
    expect(seconds).toBeLessThan(30);
  });
});
