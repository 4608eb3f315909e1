import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { PrivateStack, requireOrSkip, stackServersInstalled } from '@app/testing';

/**
 * Another process listening on a port, as a stranger on the machine would, for `forMs` or until
 * killed. A process of its own: the stack scripts run synchronously and block this one's loop.
 */
async function listener(port: number, forMs?: number): Promise<ChildProcess> {
  const script = `require('node:net').createServer((s) => s.destroy())
    .listen(${port}, '127.0.0.1', () => console.log('listening'));
    ${forMs === undefined ? '' : `setTimeout(() => process.exit(0), ${forMs});`}`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  return child;
}

describe.runIf(
  requireOrSkip(stackServersInstalled(), 'clickhouse-server, redis-server and java for a private stack'),
)('stack:up and the ports it is given', () => {
  const stacks: PrivateStack[] = [];
  afterEach(() => {
    for (const stack of stacks.splice(0)) {
      stack.down('redis');
    }
  });

  it('refuses a port another process keeps, naming the variable to change', async () => {
    const stack = await PrivateStack.create('ports-held');
    stacks.push(stack);
    const stranger = await listener(Number(stack.ports.REDIS_PORT));
    try {
      expect(() => stack.up('redis')).toThrow(/REDIS_PORT=\d+ is held by a process stack:up did not start/);
    } finally {
      stranger.kill();
    }
  });

  // A server of the stack killed with SIGKILL may keep its listening socket a moment after its pid
  // reads as exited (its other threads still closing files): a restart right then must wait, not refuse.
  it('takes a port released within moments, as a killed server releases it', async () => {
    const stack = await PrivateStack.create('ports-released');
    stacks.push(stack);
    await listener(Number(stack.ports.REDIS_PORT), 1_500);
    stack.up('redis');
    stack.kill('redis');
    stack.up('redis');
  });
});
