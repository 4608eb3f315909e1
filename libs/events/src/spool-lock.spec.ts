import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpoolLock } from './spool-lock';

/** A pid that ran and is gone. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

describe('SpoolLock', () => {
  let dir: string;
  let live: ChildProcess;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'adx-lock-'));
    live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    await new Promise((resolve) => live.once('spawn', resolve));
  });

  afterAll(() => {
    live.kill('SIGKILL');
  });

  const at = (name: string) => path.join(dir, name);

  it('is exclusive, also between two holders of one process, until released', () => {
    const first = SpoolLock.tryAcquire(at('a.lock'));
    expect(first).toBeDefined();
    expect(SpoolLock.tryAcquire(at('a.lock'))).toBeUndefined();
    first!.release();
    const second = SpoolLock.tryAcquire(at('a.lock'));
    expect(second?.held()).toBe(true);
  });

  it('names its holder: pid, start time, nonce', () => {
    const lock = SpoolLock.tryAcquire(at('b.lock'))!;
    const [pid, start, nonce] = readlinkSync(at('b.lock')).split(' ');
    expect(Number(pid)).toBe(process.pid);
    expect(start).toBe(startTimeOf(process.pid));
    expect(nonce).toMatch(/^[0-9a-f]{16}$/);
    lock.release();
  });

  it('respects the lock of a live process', () => {
    symlinkSync(`${live.pid} ${startTimeOf(live.pid!)} 00000000000000aa`, at('c.lock'));
    expect(SpoolLock.tryAcquire(at('c.lock'))).toBeUndefined();
    expect(readlinkSync(at('c.lock'))).toContain(String(live.pid));
  });

  it('takes over the lock of a dead process', () => {
    symlinkSync(`${deadPid()} 1 00000000000000bb`, at('d.lock'));
    const lock = SpoolLock.tryAcquire(at('d.lock'));
    expect(lock?.held()).toBe(true);
    expect(readlinkSync(at('d.lock')).split(' ')[0]).toBe(String(process.pid));
  });

  it('takes over a lock whose pid was reused by another process (start time differs)', () => {
    symlinkSync(`${live.pid} 1 00000000000000cc`, at('e.lock'));
    expect(SpoolLock.tryAcquire(at('e.lock'))?.held()).toBe(true);
  });

  it('takes over a damaged lock (not a link)', () => {
    writeFileSync(at('f.lock'), '');
    expect(SpoolLock.tryAcquire(at('f.lock'))?.held()).toBe(true);
  });

  it('leaves a stale lock alone while another process holds its takeover claim', () => {
    symlinkSync(`${deadPid()} 1 00000000000000dd`, at('g.lock'));
    symlinkSync(
      `${live.pid} ${startTimeOf(live.pid!)} 00000000000000ee`,
      at('g.lock.takeover-00000000000000dd'),
    );
    expect(SpoolLock.tryAcquire(at('g.lock'))).toBeUndefined();
    expect(readlinkSync(at('g.lock'))).toContain('00000000000000dd');
  });

  it('does not release a lock that another holder has taken over', () => {
    const mine = SpoolLock.tryAcquire(at('h.lock'))!;
    // As if this process had been thought dead and its lock taken over.
    const other = `${live.pid} ${startTimeOf(live.pid!)} 00000000000000ff`;
    spawnSync('ln', ['-sfn', other, at('h.lock')]);
    expect(mine.held()).toBe(false);
    mine.release();
    expect(readlinkSync(at('h.lock'))).toBe(other);
  });
});
