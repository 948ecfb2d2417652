import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type BuildOptions, build } from 'esbuild';

// The import profiles the bundle budgets cover, and how one is measured: shared by the bench's
// bundle rows and the engine test that holds each profile under its cap.

// Imports resolve from here, where the bench's own node_modules are found.
const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * What users ship, by import profile: the code a bundler keeps for these imports, each with its
 * cap (KB gz): the budget it is held to, each noted with the figure it was set on.
 */
export const PROFILES = [
  {
    name: 'bundle-step',
    // 26 KB set on 25.87 measured; 20.81 since the engine's own schemas (mini-schema) replaced zod/mini.
    capKb: 26,
    what: '`step` alone',
    source: "export { step } from '@stepfold/engine';",
  },
  {
    name: 'bundle-edge-runner',
    // 34 → 35 when flow control's hooks (the rest is behind `flowControl`), the fairness key's
    // snapshot check and the write path's allocation cuts took it to 34.1; 35 → 36 when handler
    // heartbeats (`heartbeatMs`, `ctx.heartbeat`: the leases' throttle, the details' checks) took it to 35.05;
    // 35.99 → 35.38 measured, cap kept, when handler streams (made by the store's stream), handler
    // heartbeats (`heartbeats: handlerHeartbeats`), a worker tick's sent signals and notice match, the
    // executor's attach and the child workflows' registration checks (composition's) left it.
    // 36 → 37 (36.29 measured) when session 46 merged search attributes' core hooks (the rest is
    // behind `searchAttributes`), flow work inside the save, the straight path through choices and
    // per-pass stream keys. 37 → 36 (35.79 measured) when tracing and runner hooks went behind values
    // (`defineInstrumentation`, `defineHooks`): the rest of the way to 34 is still to win back.
    // 36 → 34 (30.90 measured, from 35.9) when the engine's own schemas (mini-schema: the part of
    // zod/mini's API it uses) replaced zod/mini, which was 6.0 KB gz of every profile.
    capKb: 34,
    what: 'an edge runner: `workflow`, `defineWorkflow` and `createRunner`',
    source: "export { createRunner, defineWorkflow, workflow } from '@stepfold/engine';",
  },
  {
    name: 'bundle-edge-composition',
    // 40 → 41 (40.17 measured) with the edge runner's growth of session 46; back to 40 (39.69) with
    // the edge runner's cuts; 34.87 (from 39.88) with mini-schema, cap kept.
    capKb: 40,
    what: 'an edge runner with `composition` (child and map steps)',
    source: "export { composition, createRunner, defineWorkflow, workflow } from '@stepfold/engine';",
  },
  {
    name: 'bundle-edge-flow',
    // 39 → 40 with handler heartbeats (38.9 measured), as the edge runner's; 40 → 41 (40.61) with
    // session 46's (see the edge runner); 40.10 measured after the edge runner's cuts, cap kept;
    // 35.19 (from 40.21) with mini-schema, cap kept.
    capKb: 41,
    what: 'an edge runner with `flowControl` (flow limits)',
    source: "export { createRunner, defineWorkflow, flowControl, workflow } from '@stepfold/engine';",
  },
] as const;

/** How a Worker's bundler builds: ESM for browsers and workerd, minified, in memory. */
export const EDGE_BUILD = {
  bundle: true,
  write: false,
  format: 'esm',
  platform: 'browser',
  conditions: ['workerd', 'worker', 'browser'],
  minify: true,
  metafile: true,
  logLevel: 'silent',
} as const satisfies BuildOptions;

/**
 * ESM source bundled for browsers and Workers with its dependencies, minified + gzip; `external`
 * leaves packages out (to measure what one of them adds).
 */
export async function measureSource(contents: string, external: readonly string[] = []) {
  const result = await build({
    ...EDGE_BUILD,
    external: [...external],
    stdin: { contents, resolveDir: HERE, loader: 'js' },
  });
  const code = result.outputFiles[0]!.contents;
  const inputs = Object.entries(result.metafile.outputs)[0]![1].inputs;
  const byPackage: Record<string, number> = {};
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m ? m[1]! : '@stepfold/engine';
    byPackage[key] = (byPackage[key] ?? 0) + bytesInOutput;
  }
  return { gz: gzipSync(code).length, minified: code.length, byPackage };
}
