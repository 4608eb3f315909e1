import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig, type TestProjectConfiguration } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
const alias = [
  { find: /^@app\/([^/]+)$/, replacement: path.resolve(root, 'libs/$1/src') },
  { find: /^@apps\/([^/]+)$/, replacement: path.resolve(root, 'apps/$1/src') },
];
const plugins = [swc.vite({ module: { type: 'es6' } })];

/** Suites that may need the servers of `npm run stack:up` probe for them once, before collection. */
const STACK_PROBE = ['./test/support/stack.global-setup.ts'];

function project(
  name: string,
  include: string[],
  options: {
    globalSetup?: string[];
    testTimeout?: number;
    hookTimeout?: number;
    fileParallelism?: boolean;
  } = {},
): TestProjectConfiguration {
  return {
    plugins,
    resolve: { alias },
    test: { name, include, environment: 'node', setupFiles: ['reflect-metadata'], ...options },
  };
}

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    reporters: ['default', './test/support/summary.reporter.ts'],
    projects: [
      project('unit', ['apps/**/*.spec.ts', 'libs/**/*.spec.ts']),
      project('contract', ['test/contract/**/*.test.ts'], { globalSetup: STACK_PROBE, testTimeout: 30_000 }),
      project('integration', ['test/integration/**/*.test.ts'], {
        globalSetup: STACK_PROBE,
        testTimeout: 120_000,
        hookTimeout: 120_000,
        fileParallelism: false,
      }),
      project('e2e', ['test/e2e/**/*.test.ts'], {
        globalSetup: STACK_PROBE,
        testTimeout: 60_000,
        hookTimeout: 120_000,
        fileParallelism: false,
      }),
    ],
  },
});
