/** What a probe answers when the wait is over: anything but false, 0, '', null or undefined. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export interface WaitOptions {
  /** How long to wait before failing. */
  readonly timeoutMs: number;
  /** The pause between two probes; 100 ms by default. */
  readonly everyMs?: number;
  /**
   * Whether a probe that throws means "not yet" (a server still starting, restarting or killed on
   * purpose) rather than failing the wait at once; the last error is then the timeout's `cause`.
   */
  readonly retryErrors?: boolean;
}

/**
 * Probes until `probe` answers something truthy and returns that answer; after `timeoutMs`,
 * fails with "timed out waiting for <what>". A test waits this way for what a process or server
 * reaches on its own time (a commit, a reload, a health check), never for a fixed time.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | Promise<T>,
  { timeoutMs, everyMs = 100, retryErrors = false }: WaitOptions,
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) {
        return value as Truthy<T>;
      }
    } catch (error) {
      if (!retryErrors) {
        throw error;
      }
      lastError = error;
    }
    if (Date.now() > deadline) {
      const last =
        lastError === undefined
          ? ''
          : `; the probe last threw: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`;
      throw new Error(
        `timed out waiting for ${what} (${timeoutMs} ms${last})`,
        lastError === undefined ? undefined : { cause: lastError },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
