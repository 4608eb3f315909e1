import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../../..');
const json = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8')) as Record<string, any>;

describe('the workspace', () => {
  it('lists every app and lib in nest-cli.json, each where it lives', () => {
    const projects = json('nest-cli.json').projects as Record<string, { type: string; root: string }>;
    const onDisk = ['apps', 'libs'].flatMap((dir) =>
      readdirSync(path.join(root, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${dir}/${entry.name}`),
    );
    expect(
      Object.values(projects)
        .map((p) => p.root)
        .sort(),
    ).toEqual(onDisk.sort());
    for (const project of Object.values(projects)) {
      expect(project.type).toBe(project.root.startsWith('apps/') ? 'application' : 'library');
    }
  });

  it('typechecks the shipped code without specs and test helpers (tsconfig.build.json)', () => {
    const build = json('tsconfig.build.json');
    expect(build.extends).toBe('./tsconfig.json');
    expect(build.exclude).toEqual(expect.arrayContaining(['**/*.spec.ts', 'libs/testing']));
    expect(build.include).not.toContain('test');
  });
});
