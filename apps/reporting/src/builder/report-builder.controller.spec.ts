import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILDER_MODULES } from './report-builder.controller';

const PUBLIC_DIR = path.join(__dirname, 'public');
const source = (file: string) => readFileSync(path.join(PUBLIC_DIR, file), 'utf8');

/** The modules a module imports, by their file names (`./x.js` under /assets/). */
function importsOf(file: string): string[] {
  return [...source(file).matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)';/gms)].map(([, spec]) => {
    expect(spec, `${file} imports ${spec}`).toMatch(/^\.\/[a-z-]+\.js$/);
    return spec.slice(2);
  });
}

describe('the report builder page', () => {
  it('serves every ES module of public/ and nothing else as a module', () => {
    const files = readdirSync(PUBLIC_DIR).filter((f) => f.endsWith('.js'));
    expect([...BUILDER_MODULES].sort()).toEqual(files.sort());
  });

  it('imports only served modules, and reaches every one from builder.js', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) {
        return;
      }
      expect(BUILDER_MODULES, `imported by the page: ${file}`).toContain(file);
      reached.add(file);
      importsOf(file).forEach(visit);
    };
    visit('builder.js');
    expect([...reached].sort()).toEqual([...BUILDER_MODULES].sort());
  });

  it('marks every module @ts-check (for editors; tsconfig.builder.json checks them all) and loads the entry as a module', () => {
    for (const file of BUILDER_MODULES) {
      expect(source(file).startsWith('// @ts-check\n'), file).toBe(true);
    }
    expect(source('index.html')).toContain('<script type="module" src="/assets/builder.js"></script>');
  });
});
