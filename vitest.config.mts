import path from 'node:path';
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
const alias = [
  { find: /^@app\/([^/]+)$/, replacement: path.resolve(root, 'libs/$1/src') },
  { find: /^@apps\/([^/]+)$/, replacement: path.resolve(root, 'apps/$1/src') },
];
const plugins = [swc.vite({ module: { type: 'es6' } })];

export default defineConfig({
  plugins,
  resolve: { alias },
  test: {
    reporters: ['default', './test/support/summary.reporter.ts'],
    projects: [
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['apps/**/*.spec.ts', 'libs/**/*.spec.ts'],
          environment: 'node',
          setupFiles: ['reflect-metadata'],
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'contract',
          globalSetup: ['./test/support/stack.global-setup.ts'],
          include: ['test/contract/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['reflect-metadata'],
          testTimeout: 30_000,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'integration',
          globalSetup: ['./test/support/stack.global-setup.ts'],
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['reflect-metadata'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        plugins,
        resolve: { alias },
        test: {
          name: 'e2e',
          globalSetup: ['./test/support/stack.global-setup.ts'],
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          setupFiles: ['reflect-metadata'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
