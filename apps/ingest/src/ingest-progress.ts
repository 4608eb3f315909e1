import { ingestLastProgress, ingestRetries } from '@app/observability';

/**
 * When the ingest last moved: stored a block of events, or found nothing waiting. `/health` turns
 * down when events wait and it has not moved for a while (`stalledFor`), whatever the cause: a
 * store that refuses every write (the batch is retried meanwhile), or a consumer that stopped
 * handing batches over while the process lives.
 */
export class IngestProgress {
  private movedAt: number;
  /** When a batch was last tried, stored or not: a consumer that hands none over is wedged. */
  private triedAt: number;
  private failingSince: number | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.movedAt = now();
    this.triedAt = this.movedAt;
    ingestLastProgress.set(this.movedAt / 1000);
  }

  /** A block of events was stored. */
  stored(): void {
    this.failingSince = undefined;
    this.moved();
  }

  /** A block was refused by the store and will be tried again. */
  failed(): void {
    this.failingSince ??= this.now();
    this.triedAt = this.now();
    ingestRetries.inc();
  }

  /** Nothing waits: an idle ingest is not a stalled one. */
  idle(): void {
    this.moved();
  }

  /** How long events have waited without the ingest moving (0 when it moved lately or nothing waits). */
  stalledFor(pending: boolean): number {
    return pending || this.failingSince !== undefined ? this.now() - this.movedAt : 0;
  }

  /** How long events have waited without a batch even being tried. */
  wedgedFor(pending: boolean): number {
    return pending ? this.now() - this.triedAt : 0;
  }

  /** Whether a block has been failing since then. */
  get failing(): boolean {
    return this.failingSince !== undefined;
  }

  private moved(): void {
    this.movedAt = this.now();
    this.triedAt = this.movedAt;
    ingestLastProgress.set(this.movedAt / 1000);
  }
}
