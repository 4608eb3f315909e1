import path from 'node:path';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the cluster topology's suite, apart from `npm test` (vitest.config.mts
 * does not list test/cluster/) because it starts a cluster of its own, nine servers
 * (stack/cluster-up.sh).
 */
// npm runs the script from the repository's root.
const root = process.cwd();

export default defineConfig({
  root,
  plugins: [swc.vite({ module: { type: 'es6' } })],
  resolve: {
    alias: [
      { find: /^@app\/([^/]+)$/, replacement: path.resolve(root, 'libs/$1/src') },
      { find: /^@apps\/([^/]+)$/, replacement: path.resolve(root, 'apps/$1/src') },
    ],
  },
  test: {
    name: 'cluster',
    include: ['test/cluster/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['reflect-metadata'],
    testTimeout: 240_000,
    hookTimeout: 360_000,
    fileParallelism: false,
  },
});
