import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { EventSpool, type SlotFiles, type SpoolOptions } from './event-spool';
import { SpoolErrorCode, SpoolException } from './spool-exception';
import { sizeOf } from './spool-fs';
import { SpoolLock, processAlive } from './spool-lock';

/** Slots per client id and directory: one per live process, plus those of dead ones not yet replayed. */
const MAX_SLOTS = 1024;

/**
 * The spools of one client id in one directory. A process takes the lowest slot whose lock is free
 * or stale (its holder is dead) as its own: a restarted process usually finds its own unsent entries
 * there, and its new events queue behind them. Slots of dead processes that still hold entries are
 * adopted (their lock taken) and replayed, then removed.
 */
export class SpoolDirectory {
  readonly own: EventSpool;
  private readonly adopted: EventSpool[] = [];
  private readonly slotName: RegExp;

  constructor(private readonly options: SpoolOptions) {
    mkdirSync(options.dir, { recursive: true });
    this.slotName = new RegExp(`^${options.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}@(\\d+)\\.`);
    let own: EventSpool | undefined;
    for (let slot = 0; slot < MAX_SLOTS && !own; slot += 1) {
      const lock = SpoolLock.tryAcquire(this.files(slot).lock);
      own = lock && new EventSpool(slot, this.files(slot), lock, options);
    }
    if (!own) {
      throw new SpoolException(
        SpoolErrorCode.NoSlot,
        `no free spool slot for ${options.name} in ${options.dir} (${MAX_SLOTS} held by live processes)`,
      );
    }
    this.own = own;
    this.adoptOrphans();
  }

  /** Every spool this process holds, its own first, in the order to replay them. */
  all(): readonly EventSpool[] {
    return [this.own, ...this.adopted];
  }

  pending(): number {
    return this.all().reduce((sum, spool) => sum + spool.pending(), 0);
  }

  /** Takes over the slots of dead processes that still hold entries. */
  adoptOrphans(): void {
    const slots = new Set<number>();
    for (const file of readdirSync(this.options.dir)) {
      const slot = this.slotName.exec(file)?.[1];
      if (slot !== undefined) {
        slots.add(Number(slot));
      }
      this.sweepDraft(file);
    }
    for (const slot of [...slots].sort((a, b) => a - b)) {
      if (!this.holds(slot) && sizeOf(this.files(slot).spool) > 0) {
        this.adopt(slot);
      }
    }
  }

  /** Closes a replayed adopted spool, which removes its files and frees its slot. */
  async retire(spool: EventSpool): Promise<void> {
    const at = this.adopted.indexOf(spool);
    if (at >= 0 && spool.pending() === 0) {
      this.adopted.splice(at, 1);
      await spool.close();
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((spool) => spool.close()));
  }

  private files(slot: number): SlotFiles {
    const base = path.join(this.options.dir, `${this.options.name}@${slot}`);
    return { spool: `${base}.spool.jsonl`, cursor: `${base}.cursor`, lock: `${base}.lock` };
  }

  private holds(slot: number): boolean {
    return this.all().some((spool) => spool.slot === slot);
  }

  private adopt(slot: number): void {
    const lock = SpoolLock.tryAcquire(this.files(slot).lock);
    if (lock) {
      const spool = new EventSpool(slot, this.files(slot), lock, this.options);
      this.adopted.push(spool);
      this.options.onWarning?.(`adopted ${spool.file}, left by a process that is gone: replaying it`);
    }
  }

  /** A lock's draft left by a process killed while creating it (see SpoolLock). */
  private sweepDraft(file: string): void {
    const pid = /^.+\.(\d+)\.[0-9a-f]{16}\.tmp$/.exec(file)?.[1];
    if (pid !== undefined && file.startsWith(`${this.options.name}@`) && !processAlive(Number(pid))) {
      rmSync(path.join(this.options.dir, file), { force: true });
    }
  }
}
