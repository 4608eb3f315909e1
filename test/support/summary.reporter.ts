import type { UserConsoleLog } from 'vitest';
import type { Reporter, TestModule } from 'vitest/node';

/** What `requireOrSkip` (@app/testing) prints when a suite cannot run. */
const SKIPPED = /^SKIPPED: (.+?) is not available\s*$/m;

/**
 * Prints the plain closing line that CI reads, `N passed, N failed, N skipped`, followed on the
 * same line by why the skipped tests were skipped: the servers or programs their files said they
 * lacked (`requireOrSkip`), else skipped by name (`-t`, `.skip`, `.todo`); and the suites that a
 * missing server kept from being collected at all (the distributed e2e runs), which count no test.
 */
export default class SummaryReporter implements Reporter {
  /** The reasons each file printed, by the file's task id. */
  private readonly reasons = new Map<string, Set<string>>();

  onUserConsoleLog(log: UserConsoleLog): void {
    const reason = SKIPPED.exec(log.content)?.[1];
    if (reason !== undefined && log.taskId !== undefined) {
      const reasons = this.reasons.get(log.taskId) ?? new Set<string>();
      reasons.add(reason);
      this.reasons.set(log.taskId, reasons);
    }
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const skippedFor = new Map<string, number>();
    const notCollected = new Set<string>();
    for (const module of testModules) {
      let failedHere = 0;
      let skippedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') {
          counts.passed += 1;
        } else if (state === 'failed') {
          failedHere += 1;
        } else {
          skippedHere += 1;
        }
      }
      // A file that failed outside its tests (an import, a hook) counts as one failure.
      counts.failed += module.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
      counts.skipped += skippedHere;
      const reasons = [...(this.reasons.get(module.id) ?? [])];
      if (skippedHere > 0) {
        const why =
          reasons.length > 0 ? `${reasons.join(' and ')} not available` : 'skipped by name or filter';
        skippedFor.set(why, (skippedFor.get(why) ?? 0) + skippedHere);
      } else {
        reasons.forEach((reason) => notCollected.add(reason));
      }
    }
    const why = [...skippedFor].sort((a, b) => b[1] - a[1]).map(([reason, n]) => `${n}: ${reason}`);
    const left = [...notCollected].map((reason) => `${reason} not available, its runs left out`);
    const detail = [...why, ...left];
    process.stdout.write(
      `\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${detail.length > 0 ? ` (${detail.join('; ')})` : ''}\n`,
    );
  }
}
