import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Catalog } from './catalog';
import { CatalogException } from './catalog.exception';
import { catalogFromBytes, DEMO_CATALOG_PATH, readCatalogBytes } from './catalog.loader';

/** What one reload did: applied a new catalog, found the file unchanged, or refused it. */
export type CatalogReloadResult = 'applied' | 'unchanged' | 'refused';

export interface CatalogReload {
  readonly result: CatalogReloadResult;
  /** The version serving after the reload: the new one when applied, the old one otherwise. */
  readonly version: string;
  /** Why a file was refused (empty otherwise): every problem at once, as the loader lists them. */
  readonly problems: readonly string[];
}

/** Editors and `cp` write a file in several events: one reload after the last of a burst. */
const WATCH_SETTLE_MS = 150;

/** The version of a catalog: the first 12 hex digits of the SHA-256 of its file's bytes. */
export function catalogVersion(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}

/**
 * The catalog a process serves, replaceable while it runs: every reader asks `current` when it
 * needs it (once per request), so a reload takes effect for the next request. A reload reads the
 * file, validates it in full and swaps it in only when valid; a refused file leaves the catalog
 * that was serving. Listeners hear each applied catalog (derived indexes are rebuilt there or on
 * their next use).
 */
export class CatalogSource {
  private catalog: Catalog;
  private currentVersion: string;
  private readonly listeners = new Set<(catalog: Catalog, reload: CatalogReload) => void>();
  private watcher?: FSWatcher;
  private settleTimer?: NodeJS.Timeout;

  /** `file`: where reloads read from (the demo catalog when absent). */
  constructor(
    readonly file: string = DEMO_CATALOG_PATH,
    initial?: { catalog: Catalog; version: string },
  ) {
    if (initial) {
      this.catalog = initial.catalog;
      this.currentVersion = initial.version;
    } else {
      const bytes = readCatalogBytes(this.file);
      this.catalog = catalogFromBytes(bytes, this.file);
      this.currentVersion = catalogVersion(bytes);
    }
  }

  /** A source that never reloads from a file: a catalog built in memory (tests, tools). */
  static of(catalog: Catalog): CatalogSource {
    return new CatalogSource(DEMO_CATALOG_PATH, {
      catalog,
      version: catalogVersion(JSON.stringify(catalog.document)),
    });
  }

  get current(): Catalog {
    return this.catalog;
  }

  get version(): string {
    return this.currentVersion;
  }

  /** Reads the file again; never throws: a file that cannot be read or is invalid is refused. */
  reload(): CatalogReload {
    let bytes: Buffer;
    let next: Catalog;
    try {
      bytes = readCatalogBytes(this.file);
      if (catalogVersion(bytes) === this.currentVersion) {
        return this.emit({ result: 'unchanged', version: this.currentVersion, problems: [] });
      }
      next = catalogFromBytes(bytes, this.file);
    } catch (error) {
      const problems = error instanceof CatalogException ? error.problems : [(error as Error).message];
      return this.emit({ result: 'refused', version: this.currentVersion, problems });
    }
    this.catalog = next;
    this.currentVersion = catalogVersion(bytes);
    return this.emit({ result: 'applied', version: this.currentVersion, problems: [] });
  }

  /**
   * Hears every reload's outcome (applied, unchanged, refused), with the catalog serving after
   * it. Returns the function that stops listening.
   */
  onReload(listener: (catalog: Catalog, reload: CatalogReload) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reloads when the file changes. The directory is watched rather than the file, so that a file
   * replaced by a rename (what editors and deploy tools do) is still followed.
   */
  watch(): void {
    if (this.watcher) {
      return;
    }
    const name = path.basename(this.file);
    this.watcher = watch(path.dirname(this.file), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed !== name) {
        return;
      }
      clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => this.reload(), WATCH_SETTLE_MS);
      this.settleTimer.unref();
    });
    this.watcher.on('error', () => undefined);
  }

  close(): void {
    clearTimeout(this.settleTimer);
    this.watcher?.close();
    this.watcher = undefined;
    this.listeners.clear();
  }

  private emit(reload: CatalogReload): CatalogReload {
    for (const listener of this.listeners) {
      listener(this.catalog, reload);
    }
    return reload;
  }
}
