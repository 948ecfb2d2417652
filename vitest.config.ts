import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One vitest project per package with a test/ folder, named after the folder: packages/<name>
// gives <name>, examples/<name> gives example-<name>, and examples/test gives examples.
const dirs = (root: string) => readdirSync(root).filter((d) => existsSync(`${root}/${d}/test`));

export default defineConfig({
  test: {
    // Two files at a time even on two cores (vitest's default is cores - 1): most files wait on a
    // database server or a child process, so the full suite takes about half as long.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      ...dirs('packages').map((p) => ({
        test: {
          name: p,
          include: [`packages/${p}/test/**/*.test.ts`],
          testTimeout: p === 'engine' ? 30_000 : 120_000,
          hookTimeout: 120_000,
        },
      })),
      ...dirs('examples').map((e) => ({
        test: {
          name: `example-${e}`,
          include: [`examples/${e}/test/**/*.test.ts`],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      })),
      { test: { name: 'examples', include: ['examples/test/**/*.test.ts'], testTimeout: 60_000 } },
      // The short run of `pnpm fuzz` (fuzz/ is its own project at the root, like bench/).
      { test: { name: 'fuzz', include: ['fuzz/test/**/*.test.ts'], testTimeout: 120_000 } },
    ],
  },
});
