import { describe, expect, it } from 'vitest';
import { classify, isConnectionFailure } from './clickhouse-errors';

describe('isConnectionFailure', () => {
  it('is true for a refused or broken connection, also wrapped in a store error', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:28121'), {
      code: 'ECONNREFUSED',
    });
    expect(isConnectionFailure(refused)).toBe(true);
    expect(isConnectionFailure(new Error('socket hang up'))).toBe(true);
    expect(isConnectionFailure(Object.assign(new Error('read'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isConnectionFailure(classify(refused, 'query'))).toBe(true);
  });

  it('is false for a query ClickHouse answered with an error, a timeout or an abort', () => {
    expect(
      isConnectionFailure(Object.assign(new Error('Syntax error: failed at position 1'), { code: '62' })),
    ).toBe(false);
    expect(
      isConnectionFailure(Object.assign(new Error('Timeout exceeded: elapsed 1.2 seconds'), { code: '159' })),
    ).toBe(false);
    // The client's own request timeout: classify calls it unreachable, but the node may be busy.
    expect(isConnectionFailure(new Error('Timeout error.'))).toBe(false);
    expect(
      isConnectionFailure(Object.assign(new Error('The user aborted a request.'), { name: 'AbortError' })),
    ).toBe(false);
    expect(isConnectionFailure(undefined)).toBe(false);
  });
});
