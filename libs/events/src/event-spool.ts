import {
  close,
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsync,
  ftruncateSync,
  open,
  openSync,
  read,
  readFileSync,
  readSync,
  rename,
  rmSync,
  write,
} from 'node:fs';
import { spoolBytes } from '@app/observability';
import type { OutgoingMessage } from './event-bus.port';
import type { SpoolLock } from './spool-lock';
import { SpoolErrorCode, SpoolException } from './spool-exception';
import { fsyncDir } from './spool-fs';

export interface SpoolEntry {
  readonly topic: string;
  readonly messages: readonly OutgoingMessage[];
}

export interface SpoolOptions {
  readonly dir: string;
  /** The producer's client id: a spool is replayed by a producer of the same id (same topic prefix). */
  readonly name: string;
  /** Bound of one spool file, in bytes. */
  readonly maxBytes: number;
  /** fdatasync before an append resolves; off only to measure what it costs (bench/). */
  readonly durable?: boolean;
  readonly onWarning?: (message: string) => void;
}

/** Every spool this process holds, for the gauge. */
const held = new Set<EventSpool>();

function reportBytes(): void {
  let total = 0;
  for (const spool of held) {
    total += spool.pending();
  }
  spoolBytes.set(total);
}

function writeAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = (offset: number) =>
      write(fd, data, offset, data.length - offset, null, (error, written) => {
        if (error) {
          reject(error);
        } else if (offset + written < data.length) {
          from(offset + written);
        } else {
          resolve();
        }
      });
    from(0);
  });
}

function readAt(fd: number, length: number, position: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const buffer = Buffer.alloc(length);
    read(fd, buffer, 0, length, position, (error, bytesRead) =>
      error ? reject(error) : resolve(buffer.subarray(0, bytesRead)),
    );
  });
}

function done(operation: (callback: (error: NodeJS.ErrnoException | null) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => operation((error) => (error ? reject(error) : resolve())));
}

/** Writes a small file whole: a reader finds the old content or the new, never a mix. */
async function replaceFile(file: string, content: string): Promise<void> {
  const draft = `${file}.tmp`;
  const fd = await new Promise<number>((resolve, reject) =>
    open(draft, 'w', (error, opened) => (error ? reject(error) : resolve(opened))),
  );
  try {
    await writeAll(fd, Buffer.from(content));
    await done((cb) => fsync(fd, cb));
  } finally {
    await done((cb) => close(fd, cb));
  }
  await done((cb) => rename(draft, file, cb));
}

/** The files of one slot, as SpoolDirectory names them. */
export interface SlotFiles {
  readonly spool: string;
  readonly cursor: string;
  readonly lock: string;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * One slot's spool: an append-only file of JSON lines (one publish each) and a cursor file with the
 * bytes already replayed, under the slot's lock. Appends are group-committed: every append waiting
 * while a write and fdatasync run goes into the next write, so one fdatasync acknowledges them all.
 * Replay advances the cursor (written whole, fsynced) after Kafka acknowledged a batch; once all is
 * replayed, the cursor is removed (durably) before the file is truncated, so a crash at any point
 * leaves either entries to send again (reports deduplicate by event_id) or nothing, never a cursor
 * that skips unsent entries.
 */
export class EventSpool {
  private readonly fd: number;
  /** Bytes of whole lines in the file. */
  private size: number;
  /** Bytes of the file already replayed. */
  private cursor: number;
  private buffer: string[] = [];
  private bufferBytes = 0;
  private writingBytes = 0;
  private waiters: Waiter[] = [];
  private writing = false;
  private written: Promise<void> = Promise.resolve();
  /** Reads and cursor writes in progress, which close waits for. */
  private readonly busy = new Set<Promise<unknown>>();
  private unwritable?: Error;
  private closed = false;

  constructor(
    readonly slot: number,
    private readonly files: SlotFiles,
    private readonly lock: SpoolLock,
    private readonly options: SpoolOptions,
  ) {
    const created = !existsSync(files.spool);
    this.fd = openSync(files.spool, 'a+');
    if (created) {
      fsyncDir(options.dir);
    }
    this.size = fstatSync(this.fd).size;
    this.cutTornTail();
    this.cursor = this.loadCursor();
    held.add(this);
    reportBytes();
  }

  get file(): string {
    return this.files.spool;
  }

  /** Bytes waiting: spooled and not yet replayed, including appends not yet on disk. */
  pending(): number {
    return this.size - this.cursor + this.writingBytes + this.bufferBytes;
  }

  /** Resolves once the entry is on disk and fdatasynced; rejects (not accepted) when the spool is full. */
  append(entry: SpoolEntry): Promise<void> {
    if (this.closed) {
      return Promise.reject(new SpoolException(SpoolErrorCode.Closed, 'event spool closed'));
    }
    if (this.unwritable) {
      return Promise.reject(
        new SpoolException(SpoolErrorCode.Unwritable, `event spool unwritable: ${this.unwritable.message}`),
      );
    }
    const line = `${JSON.stringify(entry)}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.size + this.writingBytes + this.bufferBytes + bytes > this.options.maxBytes) {
      return Promise.reject(
        new SpoolException(
          SpoolErrorCode.Full,
          `event spool full (${this.options.maxBytes} bytes): Kafka has been unreachable too long`,
        ),
      );
    }
    this.buffer.push(line);
    this.bufferBytes += bytes;
    const accepted = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writing) {
      this.writing = true;
      this.written = this.writeBuffered();
    }
    reportBytes();
    return accepted;
  }

  /** The next entries to replay (at least one, about `limit` bytes), or undefined when none wait. */
  async read(limit: number): Promise<{ entries: SpoolEntry[]; end: number } | undefined> {
    if (this.closed) {
      return undefined;
    }
    if (this.cursor >= this.size) {
      // All replayed, and the write that ran at the last commit (which kept it) failed: truncate now.
      if (this.size > 0 && !this.writing) {
        this.truncate();
      }
      return undefined;
    }
    return this.track(this.readFrom(this.cursor, limit));
  }

  /** Records that everything before `end` reached Kafka. */
  async commit(end: number): Promise<void> {
    if (this.closed) {
      return;
    }
    this.cursor = end;
    if (this.cursor === this.size && !this.writing) {
      this.truncate();
    } else {
      await this.track(replaceFile(this.files.cursor, `${this.cursor}\n`));
    }
    reportBytes();
  }

  /**
   * Waits for appends in flight, then closes the file and releases the slot: an emptied spool's files
   * are removed, a non-empty one stays for the next process or for a live one to adopt.
   */
  async close(): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    await this.written;
    await Promise.allSettled([...this.busy]);
    if (this.pending() === 0) {
      rmSync(this.files.cursor, { force: true });
      rmSync(this.files.spool, { force: true });
    }
    closeSync(this.fd);
    held.delete(this);
    reportBytes();
    this.lock.release();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.busy.add(work);
    void work.finally(() => this.busy.delete(work)).catch(() => undefined);
    return work;
  }

  private async writeBuffered(): Promise<void> {
    while (this.buffer.length > 0) {
      await this.writeBatch();
    }
    this.writing = false;
  }

  private async writeBatch(): Promise<void> {
    const data = Buffer.from(this.buffer.join(''));
    const waiters = this.waiters;
    this.writingBytes = this.bufferBytes;
    this.buffer = [];
    this.waiters = [];
    this.bufferBytes = 0;
    try {
      await writeAll(this.fd, data);
      if (this.options.durable !== false) {
        await done((cb) => fdatasync(this.fd, cb));
      }
      this.size += data.length;
      waiters.forEach((w) => w.resolve());
    } catch (error) {
      // Part of the batch may be on disk: cut it off, so that no half line sits before later entries.
      try {
        ftruncateSync(this.fd, this.size);
      } catch (cut) {
        this.unwritable = cut as Error;
      }
      waiters.forEach((w) => w.reject(error));
    } finally {
      this.writingBytes = 0;
      reportBytes();
    }
  }

  private async readFrom(from: number, limit: number): Promise<{ entries: SpoolEntry[]; end: number }> {
    let length = Math.min(limit, this.size - from);
    for (;;) {
      const chunk = await readAt(this.fd, length, from);
      const last = chunk.lastIndexOf(0x0a);
      if (last < 0 && from + length < this.size) {
        // One line longer than the limit: read until its end.
        length = Math.min(length * 2, this.size - from);
        continue;
      }
      if (last < 0) {
        throw new Error(`event spool ${this.files.spool}: no whole line at byte ${from}`);
      }
      const entries: SpoolEntry[] = [];
      for (const line of chunk.subarray(0, last).toString('utf8').split('\n')) {
        try {
          entries.push(JSON.parse(line) as SpoolEntry);
        } catch {
          this.options.onWarning?.(`event spool ${this.files.spool}: a damaged line was left out`);
        }
      }
      return { entries, end: from + last + 1 };
    }
  }

  /**
   * All replayed and nothing being written: the cursor goes first (durably, with its directory), so
   * that a crash before the truncation resends entries rather than leave a cursor counting bytes of
   * entries appended after it.
   */
  private truncate(): void {
    rmSync(this.files.cursor, { force: true });
    fsyncDir(this.options.dir);
    ftruncateSync(this.fd, 0);
    fdatasyncSync(this.fd);
    this.size = 0;
    this.cursor = 0;
  }

  /** A line cut short by a crash was never acknowledged (its fdatasync had not returned): drop it. */
  private cutTornTail(): void {
    if (this.size === 0 || this.byteAt(this.size - 1) === 0x0a) {
      return;
    }
    let end = this.size;
    let whole = 0;
    while (end > 0) {
      const start = Math.max(0, end - 64 * 1024);
      const chunk = Buffer.alloc(end - start);
      readSync(this.fd, chunk, 0, chunk.length, start);
      const last = chunk.lastIndexOf(0x0a);
      if (last >= 0) {
        whole = start + last + 1;
        break;
      }
      end = start;
    }
    this.options.onWarning?.(
      `event spool ${this.files.spool}: dropped ${this.size - whole} byte(s) of an append cut short by a crash (never acknowledged)`,
    );
    ftruncateSync(this.fd, whole);
    fdatasyncSync(this.fd);
    this.size = whole;
  }

  private byteAt(position: number): number {
    const one = Buffer.alloc(1);
    readSync(this.fd, one, 0, 1, position);
    return one[0] ?? -1;
  }

  /**
   * The replayed bytes. A cursor past the end or damaged cannot be trusted to point at a line: it is
   * removed (durably, before any append could make it point into new entries) and all is resent.
   */
  private loadCursor(): number {
    let text: string;
    try {
      text = readFileSync(this.files.cursor, 'utf8').trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return 0;
      }
      throw error;
    }
    const cursor = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (
      Number.isSafeInteger(cursor) &&
      cursor <= this.size &&
      (cursor === 0 || this.byteAt(cursor - 1) === 0x0a)
    ) {
      return cursor;
    }
    rmSync(this.files.cursor, { force: true });
    fsyncDir(this.options.dir);
    return 0;
  }
}
