import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './private-stack';
import { REPOSITORY_ROOT } from './repository-root';
import { waitUntil } from './wait';

/**
 * The built reporting app (`dist/apps/reporting/src/main.js`, `npm run build` first) as an operator
 * runs it, on a store of the test's (`CLICKHOUSE_*` in `env`): its own process on a free port,
 * its errors on the test's stderr, a rate limit no test reaches, and a SIGKILL to end it.
 */
export class ReportingProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /** Starts one with `env` and waits until its `/health` answers 200 (the process is killed if not). */
  static async start(
    env: Readonly<Record<string, string>>,
    { timeoutMs, root = REPOSITORY_ROOT }: { timeoutMs: number; root?: string },
  ): Promise<ReportingProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(root, 'dist/apps/reporting/src/main.js')], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_SECOND: '100',
        ...env,
        REPORTING_PORT: String(port),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const app = new ReportingProcess(child, port);
    try {
      await waitUntil(
        `the reporting app on port ${port}`,
        async () => {
          if (app.exited) {
            throw new Error(`the reporting app exited (${child.exitCode ?? child.signalCode})`);
          }
          return (await fetch(`${app.url}/health`).catch(() => undefined))?.ok;
        },
        { timeoutMs },
      );
    } catch (error) {
      app.kill();
      throw error;
    }
    return app;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** SIGKILL, the way a crash ends it. */
  kill(): void {
    this.child.kill('SIGKILL');
  }
}
