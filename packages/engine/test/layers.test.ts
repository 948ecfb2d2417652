import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The engine's folders are layers: a module may import its own layer and the layers listed for
// it, never one above. `shared` is the top-level files (errors, ids, snapshot, events...).
const ALLOWED: Record<string, readonly string[]> = {
  shared: ['shared'],
  definition: ['shared', 'definition'],
  reducer: ['shared', 'definition', 'reducer'],
  store: ['shared', 'store'],
  runner: ['shared', 'definition', 'reducer', 'store', 'runner'],
  worker: ['shared', 'definition', 'reducer', 'store', 'runner', 'worker'],
  testing: ['shared', 'definition', 'reducer', 'store', 'runner', 'worker', 'testing'],
  /** `@stepfold/engine/diagram`, its own entry: renders definitions and snapshots, runs nothing. */
  diagram: ['shared', 'definition', 'diagram'],
  /** The package entry re-exports every layer but testing, which has its own entry. */
  entry: ['shared', 'definition', 'reducer', 'store', 'runner', 'worker'],
};

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** The layer of a path relative to `src` (posix separators). */
function layerOf(path: string): string {
  if (path === 'index.ts') return 'entry';
  const top = path.split('/')[0]!;
  return path.includes('/') ? top : 'shared';
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\('([^']+)'\)/g;

/** Every import specifier in a module's text. */
function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

/** Problems with the imports of one module at `file` (relative to src): layer breaks and banned modules. */
function violations(file: string, text: string): string[] {
  const from = layerOf(file);
  const out: string[] = [];
  for (const spec of importsOf(text)) {
    if (spec.startsWith('node:')) out.push(`${file}: imports ${spec} (the engine runs outside Node too)`);
    if (!spec.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    // The core reaches a kind's reducer rules only through the kinds table, so a kind module
    // (which calls back into the core) is never the first of the cycle to be evaluated.
    if (
      /^reducer\/kinds\/(?!index|step-rules)/.test(target) &&
      !file.startsWith('reducer/kinds/index.ts') &&
      !file.startsWith('testing/')
    )
      out.push(`${file}: imports the kind module ${spec} directly (go through reducer/kinds/index.ts)`);
    const to = layerOf(target);
    if (!ALLOWED[from]?.includes(to)) out.push(`${file}: the ${from} layer imports ${spec} (${to} layer)`);
  }
  return out;
}

describe('engine layers', () => {
  it('no module imports a layer above its own or a node: module', () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((f) =>
      violations(relative(SRC, f).split('\\').join('/'), readFileSync(f, 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('every folder under src is a known layer', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).filter((d) => d.isDirectory());
    for (const d of folders) expect(Object.keys(ALLOWED)).toContain(d.name);
    expect(folders.map((d) => d.name)).not.toContain('entry');
  });

  it('reports a reducer module importing the runner, and the definition layer importing the reducer', () => {
    expect(violations('reducer/flow.ts', "import { createRunner } from '../runner/runner.js';")).toEqual([
      'reducer/flow.ts: the reducer layer imports ../runner/runner.js (runner layer)',
    ]);
    expect(
      violations('definition/compile.ts', "import type { Cx } from '../reducer/transition-context.js';"),
    ).toHaveLength(1);
    expect(violations('store/memory-store.ts', "export { step } from '../reducer/reducer.js';")).toHaveLength(
      1,
    );
    expect(violations('errors.ts', "import { workflow } from './definition/builder.js';")).toHaveLength(1);
    expect(violations('runner/runner.ts', "import { step } from '../reducer/reducer.js';")).toEqual([]);
    expect(violations('reducer/flow.ts', "import { x } from 'node:fs';")).toHaveLength(1);
    expect(violations('reducer/flow.ts', "import { task } from './kinds/task.js';")).toHaveLength(1);
    expect(violations('reducer/kinds/index.ts', "import { task } from './task.js';")).toEqual([]);
  });
});
