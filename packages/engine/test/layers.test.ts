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
  /** Child and map steps: their reducer rules and runner effects, as the `composition` value. */
  composition: ['shared', 'definition', 'reducer', 'store', 'runner', 'composition'],
  /** Callback tokens: signed links that resume a waiting step, as the `callbackTokens` value. */
  callbacks: ['shared', 'definition', 'reducer', 'store', 'runner', 'callbacks'],
  /** Encryption at rest: a codec, and the store it wraps, as the `codec` value. */
  codec: ['shared', 'store', 'runner', 'codec'],
  /** Flow limits: their reducer rules and the runner's gate, as the `flowControl` value. */
  'flow-control': ['shared', 'definition', 'reducer', 'store', 'runner', 'flow-control'],
  /** Event triggers: filters checked, `runner.publish`, as the `eventTriggers` value. */
  triggers: ['shared', 'definition', 'reducer', 'store', 'runner', 'triggers'],
  /** Search attributes: declarations checked, `snapshot.search` kept, handlers' values checked, as the `searchAttributes` value. */
  'search-attributes': ['shared', 'definition', 'reducer', 'runner', 'search-attributes'],
  testing: [
    'shared',
    'definition',
    'reducer',
    'store',
    'runner',
    'worker',
    'composition',
    'payloads',
    'codec',
    'testing',
  ],
  /** Renders definitions and snapshots, runs nothing. */
  diagram: ['shared', 'definition', 'diagram'],
  /** `@stepfold/engine/schedules`, its own entry (it carries croner): schedules over the runner. */
  schedules: ['shared', 'definition', 'store', 'runner', 'schedules'],
  /** The payload store contract, offloading and resolving. */
  payloads: ['shared', 'definition', 'reducer', 'store', 'runner', 'payloads'],
  /** `@stepfold/engine/migrations`, its own entry (it carries immer): moving instances between versions. */
  migrations: ['shared', 'definition', 'reducer', 'store', 'runner', 'payloads', 'migrations'],
  /** The tiered store and retention. */
  lifecycle: ['shared', 'store', 'payloads', 'lifecycle'],
  /**
   * The package entry re-exports every layer but the two that are entries of their own because
   * of what they carry (schedules: croner; migrations: immer). The conformance suite (vitest) is
   * in testing/ but not re-exported: the bundle test finds no Node module in the main entry.
   */
  entry: [
    'shared',
    'definition',
    'reducer',
    'store',
    'runner',
    'worker',
    'callbacks',
    'codec',
    'composition',
    'flow-control',
    'triggers',
    'search-attributes',
    'diagram',
    'payloads',
    'lifecycle',
    'testing',
  ],
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

/** Every import specifier in a module's text; with `staticOnly`, not those of `import()` calls. */
function importsOf(text: string, staticOnly = false): string[] {
  return [...text.matchAll(IMPORT)].flatMap((m) => m[1] ?? (staticOnly ? [] : m[2]) ?? []);
}

/** Problems with the imports of one module at `file` (relative to src): layer breaks and banned modules. */
function violations(file: string, text: string): string[] {
  const from = layerOf(file);
  const out: string[] = [];
  for (const spec of importsOf(text)) {
    if (spec.startsWith('node:')) out.push(`${file}: imports ${spec} (the engine runs outside Node too)`);
    if (!spec.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    const to = layerOf(target);
    if (!ALLOWED[from]?.includes(to)) out.push(`${file}: the ${from} layer imports ${spec} (${to} layer)`);
  }
  return out;
}

/** The module a relative specifier names, relative to src (`./x.js` is the source `x.ts`). */
function resolve(file: string, spec: string): string {
  return posix.normalize(posix.join(posix.dirname(file), spec)).replace(/\.js$/, '.ts');
}

/**
 * Every import circle among `modules` (path relative to src → its text), each as the paths along
 * it, the first repeated at the end. Every static import and re-export counts, `import type` too:
 * a circle of types alone breaks no evaluation order, but it ties the modules together all the
 * same. An `import()` call does not count: it runs after every module has been evaluated.
 */
function circles(modules: ReadonlyMap<string, string>): string[][] {
  const edges = new Map<string, string[]>();
  for (const [file, text] of modules) {
    const targets = importsOf(text, true)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolve(file, spec))
      .filter((target) => modules.has(target));
    edges.set(file, [...new Set(targets)].sort());
  }
  const found: string[][] = [];
  // Depth first from each module in turn; `done` modules are on no circle not already reported.
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const next of edges.get(file) ?? []) visit(next);
    path.pop();
    done.add(file);
  };
  for (const file of [...modules.keys()].sort()) visit(file);
  return found;
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

  it('no import circle: every module can be evaluated after all it imports', () => {
    const modules = new Map(
      sources(SRC).map((f) => [relative(SRC, f).split('\\').join('/'), readFileSync(f, 'utf8')] as const),
    );
    expect(modules.size).toBeGreaterThan(20);
    expect(circles(modules).map((c) => c.join(' -> '))).toEqual([]);
  });

  it('finds a circle, a circle of type imports, and none in a chain', () => {
    const graph = (entries: Array<[string, string]>) => new Map(entries);
    expect(
      circles(
        graph([
          ['reducer/flow.ts', "import { task } from './kinds/task.js';"],
          ['reducer/kinds/task.ts', "import { advance } from '../flow.js';"],
        ]),
      ),
    ).toEqual([['reducer/flow.ts', 'reducer/kinds/task.ts', 'reducer/flow.ts']]);
    expect(
      circles(
        graph([
          ['definition/schema.ts', "import { choice } from './kinds/choice.js';"],
          ['definition/kinds/choice.ts', "import { conditionIssues } from '../condition.js';"],
          ['definition/condition.ts', "import type { Condition } from './schema.js';"],
        ]),
      ),
    ).toHaveLength(1);
    expect(
      circles(
        graph([
          ['a.ts', "import { b } from './b.js';\nexport { c } from './c.js';"],
          ['b.ts', "import type { c } from './c.js';"],
          ['c.ts', ''],
        ]),
      ),
    ).toEqual([]);
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
  });
});
