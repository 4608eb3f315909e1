import { describe, expect, it } from 'vitest';
import { waitUntil } from './wait';

describe('waitUntil', () => {
  it('answers the first truthy value of the probe, probing again until then', async () => {
    let calls = 0;
    const answer = await waitUntil('the third call', () => (++calls === 3 ? { calls } : undefined), {
      timeoutMs: 5_000,
      everyMs: 1,
    });
    expect(answer).toEqual({ calls: 3 });
  });

  it('fails after its time naming what it waited for, having probed more than once', async () => {
    let calls = 0;
    await expect(
      waitUntil('the moon', () => (calls++, false), { timeoutMs: 50, everyMs: 5 }),
    ).rejects.toThrow('timed out waiting for the moon (50 ms)');
    expect(calls).toBeGreaterThan(1);
  });

  it('fails at once when the probe throws, unless told to retry', async () => {
    let calls = 0;
    const broken = () => {
      calls += 1;
      throw new Error('connection refused');
    };
    await expect(waitUntil('a server', broken, { timeoutMs: 5_000 })).rejects.toThrow('connection refused');
    expect(calls).toBe(1);
  });

  it('retries a probe that throws when told to, and gives its last error as the cause of the timeout', async () => {
    let calls = 0;
    const restarting = async () => {
      calls += 1;
      if (calls < 3) {
        throw new Error(`refused ${calls}`);
      }
      return calls === 3;
    };
    await expect(
      waitUntil('a restart', restarting, { timeoutMs: 5_000, everyMs: 1, retryErrors: true }),
    ).resolves.toBe(true);
    const error = await waitUntil('a dead server', () => Promise.reject(new Error('refused')), {
      timeoutMs: 20,
      everyMs: 5,
      retryErrors: true,
    }).catch((e: unknown) => e as Error);
    expect(error.message).toBe('timed out waiting for a dead server (20 ms; the probe last threw: refused)');
    expect((error.cause as Error).message).toBe('refused');
  });
});
