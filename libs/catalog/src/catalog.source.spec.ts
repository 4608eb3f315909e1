import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_CATALOG_PATH } from './catalog.loader';
import { CatalogSource, catalogVersion, type CatalogReload } from './catalog.source';

type Doc = Record<string, Record<string, unknown>[]>;
const demo = (): Doc => JSON.parse(readFileSync(DEMO_CATALOG_PATH, 'utf8')) as Doc;

/** The demo catalog with the first publisher renamed: a valid change anyone can see. */
const renamed = (name: string): Doc => {
  const doc = demo();
  doc.publishers[0].name = name;
  return doc;
};

describe('catalog source', () => {
  const dirs: string[] = [];
  const sources: CatalogSource[] = [];
  afterEach(() => {
    sources.splice(0).forEach((s) => s.close());
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  const fileWith = (doc: unknown): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'adx-catalog-source-'));
    dirs.push(dir);
    const file = path.join(dir, 'catalog.json');
    writeFileSync(file, JSON.stringify(doc));
    return file;
  };
  const sourceOf = (file: string) => {
    const source = new CatalogSource(file);
    sources.push(source);
    return source;
  };

  it('swaps in a valid new file, versioned by its bytes', () => {
    const file = fileWith(renamed('Before'));
    const source = sourceOf(file);
    const first = source.current;
    expect(source.version).toBe(catalogVersion(readFileSync(file)));
    writeFileSync(file, JSON.stringify(renamed('After')));

    const reload = source.reload();

    expect(reload).toEqual({ result: 'applied', version: catalogVersion(readFileSync(file)), problems: [] });
    expect(source.current).not.toBe(first);
    expect(source.current.publishers.get('pub-1')!.name).toBe('After');
    expect(source.version).toBe(reload.version);
  });

  it('refuses an invalid file with every problem and keeps serving the old catalog', () => {
    const file = fileWith(renamed('Kept'));
    const source = sourceOf(file);
    const before = { catalog: source.current, version: source.version };
    const broken = renamed('Broken');
    broken.strategies[0].campaignId = 'cmp-404';
    broken.adSlots[0].templateId = 'tpl-404';
    writeFileSync(file, JSON.stringify(broken));

    const reload = source.reload();

    expect(reload.result).toBe('refused');
    expect(reload.version).toBe(before.version);
    expect(reload.problems).toEqual(
      expect.arrayContaining([
        `strategy ${broken.strategies[0].id as string}: unknown campaign`,
        `ad slot ${broken.adSlots[0].id as string}: unknown template`,
      ]),
    );
    expect(source.current).toBe(before.catalog);
    expect(source.version).toBe(before.version);
  });

  it('refuses a file that is not JSON or is gone, and says unchanged for the same bytes', () => {
    const file = fileWith(renamed('Same'));
    const source = sourceOf(file);
    const catalog = source.current;
    expect(source.reload()).toEqual({ result: 'unchanged', version: source.version, problems: [] });

    writeFileSync(file, '{"accounts": [');
    const truncated = source.reload();
    expect(truncated.result).toBe('refused');
    expect(truncated.problems[0]).toContain(file);

    rmSync(file);
    expect(source.reload().result).toBe('refused');
    expect(source.current).toBe(catalog);
  });

  it('follows the file when it is watched, also when it is replaced by a rename', async () => {
    const file = fileWith(renamed('Watched 0'));
    const source = sourceOf(file);
    const heard: CatalogReload[] = [];
    const next = () =>
      new Promise<CatalogReload>((resolve) => {
        const stop = source.onReload((_catalog, reload) => {
          heard.push(reload);
          if (reload.result !== 'unchanged') {
            stop();
            resolve(reload);
          }
        });
      });
    source.watch();

    const written = next();
    writeFileSync(file, JSON.stringify(renamed('Watched 1')));
    expect((await written).result).toBe('applied');
    expect(source.current.publishers.get('pub-1')!.name).toBe('Watched 1');

    // What deploy tools and editors do: write a temporary file, then rename it over the old one.
    const renamedOver = next();
    const temporary = `${file}.tmp`;
    writeFileSync(temporary, JSON.stringify(renamed('Watched 2')));
    renameSync(temporary, file);
    expect((await renamedOver).result).toBe('applied');
    expect(source.current.publishers.get('pub-1')!.name).toBe('Watched 2');

    const refused = next();
    writeFileSync(file, JSON.stringify({ ...renamed('Watched 3'), campaigns: 'none' }));
    expect((await refused).result).toBe('refused');
    expect(source.current.publishers.get('pub-1')!.name).toBe('Watched 2');
  });
});
