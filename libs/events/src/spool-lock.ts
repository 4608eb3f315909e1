import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';

/**
 * How deep a takeover may recurse: a takeover claim left by a process that died while holding it
 * (a window of microseconds) is itself taken over through a claim of its own.
 */
const MAX_TAKEOVER_DEPTH = 4;

/** The clock ticks at which a process started (/proc), to tell a live holder from a reused pid. */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const SELF_START = startTimeOf(process.pid) ?? '';

interface Holder {
  readonly pid: number;
  readonly start: string;
  readonly nonce: string;
}

function parseHolder(text: string): Holder | undefined {
  const [pid, start, nonce] = text.trim().split(' ');
  return pid && /^\d+$/.test(pid) && start !== undefined && nonce
    ? { pid: Number(pid), start, nonce }
    : undefined;
}

/**
 * Whether the holder's process still runs. A pid alone is not enough: pids are reused (a container's
 * app is pid 1 at every start), so the recorded start time must match where /proc can tell.
 */
export function processAlive(pid: number, recordedStart = ''): boolean {
  if (pid === process.pid) {
    return recordedStart === '' || recordedStart === SELF_START;
  }
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but is another user's.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') {
      return false;
    }
  }
  const start = startTimeOf(pid);
  return start === undefined || recordedStart === '' || start === recordedStart;
}

function readLock(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return undefined;
    }
    // Not a symbolic link: no holder wrote it, so it names none.
    if (code === 'EINVAL') {
      return '';
    }
    throw error;
  }
}

/**
 * An exclusive lock: a symbolic link whose target is `pid start-time nonce` (it points nowhere; the
 * target is the content). Creating a link is atomic and fails if the name exists, and a reader gets
 * the whole target or nothing, never a half-written file. A lock whose holder is dead is stale: the
 * one process that wins the takeover claim named after the stale nonce replaces it (a new link
 * renamed over it, after checking that it still names that nonce), so two processes never both take it.
 */
export class SpoolLock {
  private constructor(
    readonly path: string,
    private readonly content: string,
  ) {}

  /** The lock, or undefined while a live process holds it. */
  static tryAcquire(path: string): SpoolLock | undefined {
    return SpoolLock.acquire(path, 0);
  }

  private static acquire(path: string, depth: number): SpoolLock | undefined {
    const nonce = randomBytes(8).toString('hex');
    const content = `${process.pid} ${SELF_START} ${nonce}`;
    // A lock released between our attempts frees the name again: a few rounds settle it.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        symlinkSync(content, path);
        return new SpoolLock(path, content);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw error;
        }
      }
      const found = readLock(path);
      if (found === undefined) {
        continue;
      }
      const holder = parseHolder(found);
      if ((holder && processAlive(holder.pid, holder.start)) || depth >= MAX_TAKEOVER_DEPTH) {
        return undefined;
      }
      const claim = SpoolLock.acquire(`${path}.takeover-${holder?.nonce ?? 'damaged'}`, depth + 1);
      if (!claim) {
        return undefined;
      }
      const draft = `${path}.${process.pid}.${nonce}.tmp`;
      try {
        if (readLock(path) !== found) {
          return undefined;
        }
        symlinkSync(content, draft);
        renameSync(draft, path);
        return new SpoolLock(path, content);
      } finally {
        rmSync(draft, { force: true });
        claim.release();
      }
    }
    return undefined;
  }

  /** Whether the lock still names this holder. */
  held(): boolean {
    return readLock(this.path) === this.content;
  }

  release(): void {
    if (this.held()) {
      rmSync(this.path, { force: true });
    }
  }
}
