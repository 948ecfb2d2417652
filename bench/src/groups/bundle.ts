import { measureSource, PROFILES } from '../bundle-profiles.js';
import { costRow, type Group, type Row, rateRow } from '../row.js';

// Every entry, measured whole (informational rows: what `import *` of it would carry).
const ENTRIES = [
  '',
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
    for (const entry of ENTRIES) {
      const specifier = entry === '' ? '@stepfold/engine' : `@stepfold/engine/${entry}`;
      const m = await measureSource(`export * from '${specifier}';`);
      rows.push(
        rateRow(
          entry === '' ? 'bundle' : `bundle-${entry}`,
          Number((m.gz / 1024).toFixed(2)),
          null,
          'KB gz',
          null,
          {
            note: `${specifier} bundled whole (\`export *\`; a user's bundle keeps only what it imports: see the bundle-step and bundle-edge rows), ${how}`,
            details: { gzipBytes: m.gz, minifiedBytes: m.minified, minifiedBytesByPackage: m.byPackage },
          },
        ),
      );
    }
    return rows;
  },
};
