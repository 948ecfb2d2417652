import { existsSync, readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// One vitest project per package that has tests, named after its folder, plus the examples.
const packages = readdirSync('packages').filter((p) => existsSync(`packages/${p}/test`));

export default defineConfig({
  test: {
    projects: [
      ...packages.map((p) => ({
        test: {
          name: p,
          include: [`packages/${p}/test/**/*.test.ts`],
          testTimeout: p === 'engine' ? 30_000 : 120_000,
          hookTimeout: 120_000,
        },
      })),
      { test: { name: 'examples', include: ['examples/test/**/*.test.ts'], testTimeout: 60_000 } },
    ],
  },
});
