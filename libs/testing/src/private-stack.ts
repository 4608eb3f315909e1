import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The port variables of stack/stack-up.sh. */
const PORT_VARIABLES = [
  'KAFKA_PORT',
  'KAFKA_CONTROLLER_PORT',
  'CH_HTTP_PORT',
  'CH_TCP_PORT',
  'REDIS_PORT',
] as const;
type PortVariable = (typeof PORT_VARIABLES)[number];
export type StackService = 'kafka' | 'clickhouse' | 'redis';

/** A port nothing listens on now, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A stack of its own for a test that stops, kills or restarts servers, so that no other suite
 * (or another run at once) is disturbed: its own data folder and ports. Each port is
 * `PRIVATE_<variable>` from the environment when set (e.g. `PRIVATE_CH_HTTP_PORT`), else a free
 * port the kernel picks.
 */
export class PrivateStack {
  private constructor(
    readonly dir: string,
    readonly ports: Readonly<Record<PortVariable, string>>,
  ) {}

  static async create(name: string, env: NodeJS.ProcessEnv = process.env): Promise<PrivateStack> {
    const ports = {} as Record<PortVariable, string>;
    for (const variable of PORT_VARIABLES) {
      ports[variable] = env[`PRIVATE_${variable}`] ?? String(await freePort());
    }
    return new PrivateStack(mkdtempSync(path.join(tmpdir(), `adx-${name}-stack-`)), ports);
  }

  get kafkaBrokers(): string[] {
    return [`127.0.0.1:${this.ports.KAFKA_PORT}`];
  }

  get clickhouseUrl(): string {
    return `http://127.0.0.1:${this.ports.CH_HTTP_PORT}`;
  }

  up(...services: StackService[]): void {
    this.script('stack-up', services);
  }

  down(...services: StackService[]): void {
    this.script('stack-down', services);
  }

  /** SIGKILL, the way a crash or the OOM killer stops a server: no shutdown of its own. */
  kill(service: StackService): void {
    const pidFile = path.join(this.dir, service, `${service}.pid`);
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
  }

  private script(script: 'stack-up' | 'stack-down', services: readonly StackService[]): void {
    execFileSync('bash', [`stack/${script}.sh`, ...services], {
      // Always the single-server topology, whatever STACK_TOPOLOGY the shell exported.
      env: { ...process.env, STACK_TOPOLOGY: 'single', STACK_DIR: this.dir, ...this.ports },
      stdio: 'pipe',
      timeout: 240_000,
    });
  }
}

/** Whether the servers of a private stack can be started on this machine. */
export function stackServersInstalled(): boolean {
  try {
    execFileSync(
      'bash',
      ['-c', 'command -v clickhouse-server && command -v redis-server && command -v java'],
      {
        stdio: 'pipe',
      },
    );
    return true;
  } catch {
    return false;
  }
}
