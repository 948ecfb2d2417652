import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { type Group, type Row, rateRow } from '../row.js';

// The main entry's cap. Raised from 30 with runner.send (the asynchronous signal) and its path
// through the write loop, and from 31 with the builder's run-time name checks (condition paths
// against the declared input, declared signals, one duplicate-id issue); what a per-event Worker
// does not need lives in its own entry (worker, memory, store-kit, introspect, diagram, testing).
const BUDGET_KB = 32;

// Every other entry, measured the same way (informational rows: no budget of their own).
const ENTRIES = [
  'worker',
  'memory',
  'composition',
  'schedules',
  'migrations',
  'lifecycle',
  'payloads',
  'store-kit',
  'introspect',
  'diagram',
  'testing',
] as const;

/** An entry as a browser/Workers ESM bundle with its dependencies, minified + gzip. */
async function measure(specifier: string) {
  const entry = createRequire(import.meta.url).resolve(specifier);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    minify: true,
    metafile: true,
    logLevel: 'silent',
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

/** The engine's entries as browser/Workers ESM bundles with their dependency (zod/mini), minified + gzip. */
export const bundle: Group = {
  name: 'bundle',
  async run() {
    const main = await measure('@stepfold/engine');
    const kb = main.gz / 1024;
    const esbuild = (await import('esbuild')).version;
    // ratio = budget / ours, so under budget is >= 1.
    const row = rateRow('bundle', BUDGET_KB / kb, 1, 'KB gz', 1, {
      note: `main entry; esbuild ${esbuild}, platform browser, format esm, minified, gzip (zlib default level); minified ${(main.minified / 1024).toFixed(1)} KB before gzip`,
      details: { gzipBytes: main.gz, minifiedBytes: main.minified, minifiedBytesByPackage: main.byPackage },
    });
    const rows: Row[] = [{ ...row, ours: Number(kb.toFixed(2)), baseline: BUDGET_KB }];
    for (const name of ENTRIES) {
      const e = await measure(`@stepfold/engine/${name}`);
      rows.push(
        rateRow(`bundle-${name}`, Number((e.gz / 1024).toFixed(2)), null, 'KB gz', null, {
          note: `@stepfold/engine/${name} bundled alone (it shares most of its code with the main entry), measured as the main entry is`,
          details: { gzipBytes: e.gz, minifiedBytes: e.minified, minifiedBytesByPackage: e.byPackage },
        }),
      );
    }
    return rows;
  },
};
