import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './private-stack';
import { REPOSITORY_ROOT } from './repository-root';

/**
 * The built ingest app (`dist/apps/ingest/src/main.js`, `npm run build` first) as an operator runs
 * it: its own process, its HTTP port for `/health` and `/metrics`, its output kept for a failure's
 * diagnosis, and a SIGKILL that leaves what a crash leaves.
 */
export class IngestProcess {
  readonly log: string[] = [];

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
  ) {
    for (const stream of [child.stdout, child.stderr]) {
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => this.log.push(...chunk.split('\n').filter(Boolean)));
    }
  }

  /** Starts one with `env` (the ingest's variables) on a free port. */
  static async start(env: Readonly<Record<string, string>>, root = REPOSITORY_ROOT): Promise<IngestProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(root, 'dist/apps/ingest/src/main.js')], {
      cwd: root,
      env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env, INGEST_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new IngestProcess(child, port);
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** SIGKILL, and its end awaited. */
  async kill(): Promise<void> {
    if (!this.exited) {
      const ended = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await ended;
    }
  }

  /** A metric of its `/metrics` (the sum over its labels), 0 while it does not answer. */
  async metric(name: string): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.port}/metrics`).catch(() => undefined);
    const text = response?.ok ? await response.text() : '';
    return text
      .split('\n')
      .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  }

  /** The status of its `/health`, 0 while it does not answer. */
  async health(): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${this.port}/health`).catch(() => undefined);
    return response?.status ?? 0;
  }
}
