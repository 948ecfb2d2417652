import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { type Group, rateRow } from '../row.js';

// The main entry's cap. Raised from 30 with runner.send (the asynchronous signal) and its path
// through the write loop, and from 31 with the builder's run-time name checks (condition paths
// against the declared input, declared signals, one duplicate-id issue); tools' helpers live in
// their own entries (worker, introspect, diagram, testing).
const BUDGET_KB = 32;

/** The engine as a browser/Workers ESM bundle with its dependency (zod/mini), minified + gzip. */
export const bundle: Group = {
  name: 'bundle',
  async run() {
    const entry = createRequire(import.meta.url).resolve('@stepfold/engine');
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
    const gz = gzipSync(code).length;
    const kb = gz / 1024;
    const inputs = Object.entries(result.metafile.outputs)[0]![1].inputs;
    const byPackage: Record<string, number> = {};
    for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
      const m = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path);
      const key = m ? m[1]! : '@stepfold/engine';
      byPackage[key] = (byPackage[key] ?? 0) + bytesInOutput;
    }
    // ratio = budget / ours, so under budget is >= 1.
    const row = rateRow('bundle', BUDGET_KB / kb, 1, 'KB gz', 1, {
      note: `esbuild ${(await import('esbuild')).version}, platform browser, format esm, minified, gzip (zlib default level); minified ${(code.length / 1024).toFixed(1)} KB before gzip`,
      details: { gzipBytes: gz, minifiedBytes: code.length, minifiedBytesByPackage: byPackage },
    });
    return [{ ...row, ours: Number(kb.toFixed(2)), baseline: BUDGET_KB }];
  },
};
