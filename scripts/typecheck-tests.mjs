// Type-checks every test folder (packages/*/test, examples/*/test, examples/test) and the Worker: vitest strips types without
// checking them, so this is what keeps test code honest. Run after `pnpm build` (tests import dist types).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['packages', 'examples'];
const projects = roots.flatMap((root) =>
  readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'test', 'tsconfig.json')))
    .map((d) => join(root, d.name, 'test')),
);
// Projects tsc -b does not build: the examples' own tests, the Worker and the benches (checked, never emitted).
for (const extra of [
  'bench',
  'fuzz/test',
  'examples/test',
  'examples/cloudflare-worker/tsconfig.json',
  'examples/cloudflare-worker/tsconfig.test.json',
  'packages/cloudflare/test/fixtures/tsconfig.json',
]) {
  if (existsSync(extra)) projects.push(extra);
}
let failed = 0;
for (const project of projects) {
  try {
    // Tests read snapshots' open maps (`s.steps.review`) freely; sources and consumers keep the flag.
    const loose = project.includes('test') ? ['--noPropertyAccessFromIndexSignature', 'false'] : [];
    execFileSync('pnpm', ['exec', 'tsc', '-p', project, '--noEmit', ...loose], { stdio: 'inherit' });
  } catch {
    failed++;
    console.error(`typecheck failed: ${project}`);
  }
}
console.log(`typechecked ${projects.length} test folders, ${failed} failed`);
process.exit(failed ? 1 : 0);
