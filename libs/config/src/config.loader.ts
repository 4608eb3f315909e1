import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';

const SECRET_KEYS = Symbol('SECRET_KEYS');

export enum ConfigErrorCode {
  Invalid = 'CONFIG_INVALID',
}

export class ConfigException extends Error {
  constructor(
    readonly code: ConfigErrorCode,
    readonly problems: readonly string[],
  ) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigException';
  }
}

/** Marks a configuration property as secret: it is never printed by `describeConfig`. */
export function Secret(): PropertyDecorator {
  return (target, key) => {
    const keys = (Reflect.getMetadata(SECRET_KEYS, target) as Set<string | symbol> | undefined) ?? new Set();
    keys.add(key);
    Reflect.defineMetadata(SECRET_KEYS, keys, target);
  };
}

/**
 * Reads one app's configuration from environment variables named like its properties, converts
 * types, and validates it, failing with every bad variable listed at once.
 */
export function loadConfig<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv): T {
  const defaults = new cls();
  const plain: Record<string, unknown> = {};
  for (const key of Object.keys(defaults)) {
    const raw = env[key];
    if (raw === undefined || raw === '') {
      continue;
    }
    const fallback = (defaults as Record<string, unknown>)[key];
    plain[key] =
      typeof fallback === 'number' ? (/^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw) : raw;
  }
  const config = plainToInstance(cls, { ...defaults, ...plain });
  const problems = validateSync(config, { forbidUnknownValues: true }).flatMap((e) =>
    Object.values(e.constraints ?? {}).map(
      (m) => `${e.property}: ${m} (got ${JSON.stringify(plain[e.property] ?? null)})`,
    ),
  );
  if (problems.length > 0) {
    throw new ConfigException(ConfigErrorCode.Invalid, problems);
  }
  return config;
}

/** The configuration as a loggable object, secrets replaced. */
export function describeConfig(config: object): Record<string, unknown> {
  const secrets = (Reflect.getMetadata(SECRET_KEYS, config) as Set<string | symbol> | undefined) ?? new Set();
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, secrets.has(k) && v !== undefined ? '[secret]' : v]),
  );
}
