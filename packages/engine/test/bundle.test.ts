import { builtinModules } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { EDGE_BUILD, measureSource, PROFILES } from '../../../bench/src/bundle-profiles.js';

const entry = new URL('../dist/index.js', import.meta.url).pathname;
const nodeBuiltins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

describe('engine bundle', () => {
  it('bundles for browsers and Workers with no Node built-ins', async () => {
    const imported: string[] = [];
    const result = await build({
      ...EDGE_BUILD,
      entryPoints: [entry],
      plugins: [
        {
          name: 'no-node-builtins',
          setup(b) {
            b.onResolve({ filter: /.*/ }, (args) => {
              if (nodeBuiltins.has(args.path)) imported.push(`${args.path} (from ${args.importer})`);
              return undefined;
            });
          },
        },
      ],
    });
    expect(imported).toEqual([]);
    const code = result.outputFiles[0]!.text;
    expect(code).not.toMatch(/\brequire\(/);
    expect(code).not.toMatch(/new Function\(|\beval\(/);
  });

  // The caps of what users ship, by import profile (the same sources as `pnpm bench bundle`).
  for (const p of PROFILES) {
    it(`${p.name}: ${p.what} stays under ${p.capKb} KB gz`, async () => {
      const { gz } = await measureSource(p.source);
      expect(gz).toBeLessThanOrEqual(p.capKb * 1024);
    });
  }
});
