import { fileURLToPath } from 'node:url';
import { measureSource, PROFILES } from '../bundle-profiles.js';
import { costRow, type Group, type Row, rateRow } from '../row.js';

// Informational rows, each bundled whole (what `import *` would carry): the entries, and the
// parts of the main entry that were entries of their own before it took them in (by their module,
// so the rows stay comparable).
const WHOLE = [
  ['bundle', '@stepfold/engine'],
  ['bundle-schedules', '@stepfold/engine/schedules'],
  ['bundle-migrations', '@stepfold/engine/migrations'],
  ['bundle-worker', 'worker/index.js'],
  ['bundle-memory', 'store/memory-store.js'],
  ['bundle-composition', 'composition/index.js'],
  ['bundle-lifecycle', 'lifecycle/index.js'],
  ['bundle-payloads', 'payloads/index.js'],
  ['bundle-store-kit', 'store/index.js'],
  ['bundle-introspect', 'definition/introspect.js'],
  ['bundle-diagram', 'diagram/index.js'],
  ['bundle-testing', 'testing/index.js'],
] as const;
const ENGINE_DIST = fileURLToPath(new URL('../../../packages/engine/dist/', import.meta.url));

/** The engine by import profile (with caps) and by entry (informational), as Workers bundles. */
export const bundle: Group = {
  name: 'bundle',
  async run() {
    const esbuild = (await import('esbuild')).version;
    const how = `esbuild ${esbuild}, platform browser, format esm, minified, gzip (zlib default level)`;
    const rows: Row[] = [];
    for (const p of PROFILES) {
      const m = await measureSource(p.source);
      const kb = Number((m.gz / 1024).toFixed(2));
      // ratio = cap / ours, so under the cap is >= 1.
      rows.push(
        costRow(p.name, kb, p.capKb, 'KB gz', 1, {
          note: `${p.what}, as a bundler keeps it for \`${p.source.replace(/\n/g, ' ')}\`; baseline: its ${p.capKb} KB cap; ${how}; minified ${(m.minified / 1024).toFixed(1)} KB before gzip`,
          details: { gzipBytes: m.gz, minifiedBytes: m.minified, minifiedBytesByPackage: m.byPackage },
        }),
      );
    }
    for (const [name, module] of WHOLE) {
      const specifier = module.startsWith('@') ? module : `${ENGINE_DIST}${module}`;
      const what = module.startsWith('@')
        ? module
        : `the main entry's ${module.replace(/(\/index)?\.js$/, '')} part`;
      const m = await measureSource(`export * from '${specifier}';`);
      rows.push(
        rateRow(name, Number((m.gz / 1024).toFixed(2)), null, 'KB gz', null, {
          note: `${what} bundled whole (\`export *\`; a user's bundle keeps only what it imports: see the bundle-step and bundle-edge rows), ${how}`,
          details: { gzipBytes: m.gz, minifiedBytes: m.minified, minifiedBytesByPackage: m.byPackage },
        }),
      );
    }
    return rows;
  },
};
