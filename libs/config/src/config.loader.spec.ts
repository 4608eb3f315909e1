import { IsInt, IsString, Max, Min } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { ConfigException, Secret, describeConfig, loadConfig } from './config.loader';

class SampleConfig {
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 8080;

  @IsString()
  NAME = 'adx';

  @IsInt()
  @Min(1)
  WORKERS = 2;

  @Secret()
  @IsString()
  API_TOKEN = 'dev-token';
}

describe('loadConfig', () => {
  it('keeps defaults and converts numbers', () => {
    const config = loadConfig(SampleConfig, { PORT: '9000' });
    expect(config).toMatchObject({ PORT: 9000, NAME: 'adx' });
  });

  it('lists every bad variable at once', () => {
    try {
      loadConfig(SampleConfig, { PORT: 'eighty', WORKERS: '0', NAME: 'ok' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigException);
      const problems = (error as ConfigException).problems;
      expect(problems.some((p) => p.startsWith('PORT:'))).toBe(true);
      expect(problems.some((p) => p.startsWith('WORKERS:'))).toBe(true);
      expect(problems.some((p) => p.startsWith('NAME:'))).toBe(false);
    }
  });

  it('never describes a secret', () => {
    const described = describeConfig(loadConfig(SampleConfig, { API_TOKEN: 'hunter2-secret' }));
    expect(JSON.stringify(described)).not.toContain('hunter2');
    expect(described.API_TOKEN).toBe('[secret]');
  });
});
