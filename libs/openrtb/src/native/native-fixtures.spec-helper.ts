import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Test support for the native specs: the fixtures under test/fixtures/openrtb. */
export const FIXTURES = path.resolve(__dirname, '../../../../test/fixtures/openrtb');

/**
 * A file under test/fixtures/openrtb: its text without a pointer, the value at a JSON pointer
 * inside it with one; `as: "object"` parses the text.
 */
export interface FixtureRef {
  file: string;
  pointer?: string;
  as?: 'object';
}

export function resolveFixture(ref: FixtureRef): unknown {
  const text = readFileSync(path.join(FIXTURES, ref.file), 'utf8');
  if (ref.pointer === undefined) {
    return ref.as === 'object' ? JSON.parse(text) : text;
  }
  return ref.pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, token) => (node as Record<string, unknown>)[token], JSON.parse(text));
}

/** The JSON cases of a folder under test/fixtures/openrtb/cases, by file name. */
export function readCases<T>(folder: string): { file: string; c: T }[] {
  const dir = path.join(FIXTURES, 'cases', folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => ({ file, c: JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as T }));
}
