import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type * as NodeFs from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { register } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventSpool, SpoolEntry } from './event-spool';
import { SpoolDirectory } from './spool-directory';
import { SpoolErrorCode } from './spool-exception';

/** Counts fdatasync calls, to see appends share them; fails one write halfway, as a full disk does. */
const syncs = vi.hoisted(() => ({ count: 0, failNextWrite: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  return {
    ...fs,
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
      syncs.count += 1;
      fs.fdatasync(fd, callback);
    },
    write: (
      fd: number,
      buffer: Buffer,
      offset: number,
      length: number,
      position: null,
      callback: (error: NodeJS.ErrnoException | null, written: number, buffer: Buffer) => void,
    ) => {
      if (!syncs.failNextWrite) {
        fs.write(fd, buffer, offset, length, position, callback);
        return;
      }
      syncs.failNextWrite = false;
      fs.write(fd, buffer, offset, Math.floor(length / 2), position, () =>
        callback(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }), 0, buffer),
      );
    },
  };
});

const entry = (value: string, topic = 'adx.click'): SpoolEntry => ({
  topic,
  messages: [{ key: 'k', value }],
});
const line = (e: SpoolEntry) => `${JSON.stringify(e)}\n`;
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid;

async function gauge(): Promise<number> {
  const metric = await register.getSingleMetric('adx_event_spool_bytes')!.get();
  return metric.values[0]?.value ?? 0;
}

async function readAll(spool: EventSpool): Promise<string[]> {
  const values: string[] = [];
  for (;;) {
    const batch = await spool.read(64);
    if (!batch) {
      return values;
    }
    values.push(...batch.entries.flatMap((e) => e.messages.map((m) => m.value)));
    await spool.commit(batch.end);
  }
}

describe('EventSpool and SpoolDirectory', () => {
  let dir: string;
  const open: SpoolDirectory[] = [];
  const directory = (maxBytes = 1024 * 1024) => {
    const spools = new SpoolDirectory({ dir, name: 'adx', maxBytes });
    open.push(spools);
    return spools;
  };
  const file = (name: string) => path.join(dir, name);

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'adx-spool-spec-'));
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('gives each holder its own slot: two at once never write the same file', async () => {
    const first = directory();
    const second = directory();
    expect([first.own.slot, second.own.slot]).toEqual([0, 1]);
    await Promise.all([first.own.append(entry('a')), second.own.append(entry('b'))]);
    expect(readFileSync(file('adx@0.spool.jsonl'), 'utf8')).toBe(line(entry('a')));
    expect(readFileSync(file('adx@1.spool.jsonl'), 'utf8')).toBe(line(entry('b')));
  });

  it('group-commits: appends waiting for one fdatasync share the next one', async () => {
    const spools = directory();
    syncs.count = 0;
    await Promise.all(Array.from({ length: 200 }, (_, i) => spools.own.append(entry(`e${i}`))));
    // The first append's write runs alone; the other 199 wait for it and go together.
    expect(syncs.count).toBeLessThanOrEqual(2);
    expect(await readAll(spools.own)).toEqual(Array.from({ length: 200 }, (_, i) => `e${i}`));
  });

  it('is bounded: a full spool refuses an entry (not accepted) and keeps what it holds', async () => {
    const spools = directory(300);
    await spools.own.append(entry('x'.repeat(150)));
    const refused = spools.own.append(entry('y'.repeat(150)));
    await expect(refused).rejects.toMatchObject({ code: SpoolErrorCode.Full });
    await expect(refused).rejects.toThrow(/spool full/);
    expect(await readAll(spools.own)).toEqual(['x'.repeat(150)]);
  });

  it('a write that fails halfway rejects its appends and leaves no half line before later ones', async () => {
    const spools = directory();
    await spools.own.append(entry('a'));
    syncs.failNextWrite = true;
    await expect(spools.own.append(entry('b'))).rejects.toThrow(/ENOSPC/);
    await spools.own.append(entry('c'));
    expect(readFileSync(file('adx@0.spool.jsonl'), 'utf8')).toBe(line(entry('a')) + line(entry('c')));
    expect(await readAll(spools.own)).toEqual(['a', 'c']);
  });

  it('counts every spool of the process in adx_event_spool_bytes', async () => {
    const first = directory();
    const second = directory();
    await first.own.append(entry('a'));
    await second.own.append(entry('bb'));
    expect(await gauge()).toBe(line(entry('a')).length + line(entry('bb')).length);
    await readAll(first.own);
    await readAll(second.own);
    expect(await gauge()).toBe(0);
  });

  it('keeps its place across a restart: the cursor records what Kafka acknowledged', async () => {
    const spools = directory();
    for (const value of ['a', 'b', 'c']) {
      await spools.own.append(entry(value));
    }
    const first = (await spools.own.read(1))!;
    expect(first.entries.map((e) => e.messages[0]?.value)).toEqual(['a']);
    await spools.own.commit(first.end);
    expect(readFileSync(file('adx@0.cursor'), 'utf8').trim()).toBe(String(first.end));
    await spools.close();
    expect(await readAll(directory().own)).toEqual(['b', 'c']);
  });

  it('truncates once all is replayed, removing the cursor first; entries appended during replay stay', async () => {
    const spools = directory();
    await spools.own.append(entry('a'));
    const batch = (await spools.own.read(1024))!;
    await spools.own.append(entry('b'));
    await spools.own.commit(batch.end);
    expect(statSync(file('adx@0.spool.jsonl')).size).toBeGreaterThan(batch.end);
    expect(await readAll(spools.own)).toEqual(['b']);
    expect(statSync(file('adx@0.spool.jsonl')).size).toBe(0);
    expect(existsSync(file('adx@0.cursor'))).toBe(false);
  });

  it('after a crash between removing the cursor and truncating, resends rather than skips', async () => {
    writeFileSync(file('adx@0.spool.jsonl'), line(entry('a')) + line(entry('b')));
    expect(await readAll(directory().own)).toEqual(['a', 'b']);
  });

  it('distrusts a cursor past the end or off a line boundary: removes it and resends all', async () => {
    writeFileSync(file('adx@0.spool.jsonl'), line(entry('a')));
    writeFileSync(file('adx@0.cursor'), '100000\n');
    writeFileSync(file('adx@1.spool.jsonl'), line(entry('b')) + line(entry('c')));
    writeFileSync(file('adx@1.cursor'), '3\n');
    // Slot 0 is taken as its own, slot 1 (no lock: its holder is gone) adopted.
    const spools = directory();
    expect(existsSync(file('adx@0.cursor'))).toBe(false);
    expect(existsSync(file('adx@1.cursor'))).toBe(false);
    const [own, adopted] = spools.all();
    expect(await readAll(own)).toEqual(['a']);
    expect(await readAll(adopted)).toEqual(['b', 'c']);
  });

  it('drops a line cut short by a crash (never acknowledged) and appends after the last whole one', async () => {
    writeFileSync(file('adx@0.spool.jsonl'), line(entry('a')) + '{"topic":"adx.cli');
    const spools = directory();
    await spools.own.append(entry('b'));
    expect(await readAll(spools.own)).toEqual(['a', 'b']);
  });

  it('adopts the slot of a dead process, replays it, then removes it', async () => {
    writeFileSync(file('adx@3.spool.jsonl'), line(entry('orphan')));
    symlinkSync(`${deadPid()} 1 00000000000000aa`, file('adx@3.lock'));
    const spools = directory();
    const [own, ...adopted] = spools.all();
    expect(own?.slot).toBe(0);
    const values: string[] = [];
    for (const spool of adopted) {
      values.push(...(await readAll(spool)));
      await spools.retire(spool);
    }
    expect(values).toEqual(['orphan']);
    expect(spools.all()).toEqual([own]);
    expect(readdirSync(dir).sort()).toEqual(['adx@0.lock', 'adx@0.spool.jsonl']);
  });

  it("leaves a live process's slot alone, also when it holds entries", async () => {
    const first = directory();
    await first.own.append(entry('a'));
    const second = directory();
    expect(second.all().map((s) => s.slot)).toEqual([1]);
    expect(readlinkSync(file('adx@0.lock')).split(' ')[0]).toBe(String(process.pid));
  });

  it('on close, removes an empty spool and keeps a non-empty one for the next holder', async () => {
    const emptied = directory();
    await emptied.own.append(entry('a'));
    await readAll(emptied.own);
    await emptied.close();
    expect(readdirSync(dir)).toEqual([]);
    const kept = directory();
    await kept.own.append(entry('b'));
    await kept.close();
    expect(readdirSync(dir)).toEqual(['adx@0.spool.jsonl']);
    appendFileSync(file('adx@0.spool.jsonl'), '');
    expect(await readAll(directory().own)).toEqual(['b']);
  });

  it('refuses appends once closed', async () => {
    const spools = directory();
    await spools.close();
    await expect(spools.own.append(entry('a'))).rejects.toMatchObject({ code: SpoolErrorCode.Closed });
  });
});
