import { describe, expect, it } from 'vitest';
import { ConfigException, loadConfig } from './config.loader';
import { StoreSettings } from './shared-settings';

describe('StoreSettings: DUCKDB_MEMORY_LIMIT', () => {
  it('defaults to a limit, and an empty value keeps it', () => {
    expect(loadConfig(StoreSettings, {}).DUCKDB_MEMORY_LIMIT).toBe('1GB');
    expect(loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: '' }).DUCKDB_MEMORY_LIMIT).toBe('1GB');
  });

  it.each(['0', '64MB', '1GB', '1.5GB', '512MiB', '2 GiB', '300mb', '0.5GB'])('takes %s', (value) => {
    expect(loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: value }).DUCKDB_MEMORY_LIMIT).toBe(value);
  });

  it.each(['256', 'lots', '-1GB', '0MB', '1 PB', '80%', '1GB; SET threads=1'])('refuses %s', (value) => {
    expect(() => loadConfig(StoreSettings, { DUCKDB_MEMORY_LIMIT: value })).toThrow(ConfigException);
  });
});
