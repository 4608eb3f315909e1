import { describe, expect, it } from 'vitest';
import { type FixtureRef, readCases, resolveFixture } from './native-fixtures.spec-helper';
import { buildNativeRequest, nativeImpPayload } from './native-request.builder';
import { validateNativeRequest } from './native-request.validator';

/**
 * One case of `test/fixtures/openrtb/cases/native-requests`: the request is `request` as it is
 * (a string is `imp.native.request`'s JSON text), `requestRef`, or our own built for `slot`, in
 * `form` (object by default). Each expected problem is the start of the actual one, in order.
 */
interface NativeRequestCase {
  description: string;
  request?: unknown;
  requestRef?: FixtureRef;
  slot?: { w: number; h: number };
  form?: 'object' | 'string';
  expect: { problems: string[] };
}

function requestOf(c: NativeRequestCase): unknown {
  if (c.requestRef) {
    return resolveFixture(c.requestRef);
  }
  if (c.slot) {
    return nativeImpPayload(buildNativeRequest(c.slot), c.form ?? 'object').request;
  }
  return c.request;
}

const cases = readCases<NativeRequestCase>('native-requests');

describe('validateNativeRequest, table of cases', () => {
  it('covers every Prebid Server valid-native and invalid-native vector', () => {
    const files = new Set(cases.map(({ c }) => c.requestRef?.file));
    for (const file of [
      'valid-native/assets-with-unique-ids.json',
      'valid-native/request-no-context.json',
      'invalid-native/asset-data-no-type.json',
      'invalid-native/asset-empty.json',
      'invalid-native/asset-mixed-type.json',
      'invalid-native/asset-title-empty.json',
      'invalid-native/assets-with-dup-ids.json',
      'invalid-native/empty-object.json',
    ]) {
      expect(files).toContain(`prebid-server/${file}`);
    }
  });

  it.each(cases)('$file', ({ c }) => {
    const problems = validateNativeRequest(requestOf(c));
    expect(problems.length, `${c.description}: ${JSON.stringify(problems)}`).toBe(c.expect.problems.length);
    c.expect.problems.forEach((expected, i) =>
      expect(problems[i].startsWith(expected), problems[i]).toBe(true),
    );
  });
});

describe('validateNativeRequest', () => {
  it('never throws, whatever it is given', () => {
    const deep = `${'['.repeat(30_000)}${']'.repeat(30_000)}`;
    for (const value of [
      undefined,
      1,
      true,
      Symbol('x'),
      () => 1,
      deep,
      'x'.repeat(70_000),
      { assets: [null] },
    ]) {
      expect(() => validateNativeRequest(value)).not.toThrow();
      expect(validateNativeRequest(value)).not.toEqual([]);
    }
  });

  it('refuses a string request above the markup size limit', () => {
    const big = JSON.stringify({ assets: [{ id: 1, title: { len: 90 } }], ext: { pad: 'x'.repeat(70_000) } });
    expect(validateNativeRequest(big)).toEqual([expect.stringMatching(/^the request is above/)]);
  });
});
