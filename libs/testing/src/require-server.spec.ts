import { afterEach, describe, expect, it, vi } from 'vitest';
import { isCi, requireOrSkip } from './require-server';

describe('requireOrSkip', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('lets a suite run when what it needs is there, CI or not', () => {
    expect(requireOrSkip(true, 'a server', {})).toBe(true);
    expect(requireOrSkip(true, 'a server', { CI: 'true' })).toBe(true);
  });

  it.each(['true', '1', 'yes', 'woodpecker', 'false'])(
    'fails a missing server under CI=%s: any non-empty CI is CI',
    (value) => {
      expect(isCi({ CI: value })).toBe(true);
      expect(() => requireOrSkip(false, 'ClickHouse', { CI: value })).toThrow(
        'ClickHouse is required under CI but is not available',
      );
    },
  );

  it.each([
    ['unset', {}],
    ['empty', { CI: '' }],
  ])('skips a missing server, saying why, when CI is %s', (_name, env: NodeJS.ProcessEnv) => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(isCi(env)).toBe(false);
    expect(requireOrSkip(false, 'ClickHouse', env)).toBe(false);
    expect(warn).toHaveBeenCalledWith('SKIPPED: ClickHouse is not available');
  });
});
