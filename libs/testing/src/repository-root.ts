import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository's root, from the sources or from their build under dist/. */
function repositoryRoot(from = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') {
    dir = path.dirname(dir);
  }
  return dir;
}

/** Where the built apps (`dist/apps/<app>/src/main.js`, `npm run build` first) are run from. */
export const REPOSITORY_ROOT = repositoryRoot();
