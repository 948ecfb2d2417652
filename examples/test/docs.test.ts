import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ERROR_KINDS, type ErrorKind, HTTP_STATUS } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Every ```ts block in docs/*.md is a complete program: extracted into examples/.docs-check (where
// `@stepfold/engine` resolves from examples/node_modules), type-checked in one tsc run, and each
// run with node. A block fenced with another tag (```ts fragment, ```sh) is only shown.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOCS = join(ROOT, 'docs');
const WORK = join(ROOT, 'examples/.docs-check');

interface Block {
  name: string;
  where: string;
  code: string;
}

function blocks(): Block[] {
  const out: Block[] = [];
  for (const file of readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()) {
    const lines = readFileSync(join(DOCS, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] !== '```ts') continue;
      const start = i + 1;
      let end = start;
      while (end < lines.length && lines[end] !== '```') end++;
      out.push({
        name: `${file.replace(/\.md$/, '')}-${start + 1}`,
        where: `docs/${file}:${start + 1}`,
        code: lines.slice(start, end).join('\n'),
      });
      i = end;
    }
  }
  return out;
}

describe('docs examples', () => {
  const all = blocks();

  it('there are examples on every page', () => {
    const pages = new Set(all.map((b) => b.where.split(':')[0]));
    expect([...pages].sort()).toEqual(
      readdirSync(DOCS)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`)
        .sort(),
    );
  });

  it('type-check and run', async () => {
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(join(WORK, 'src'), { recursive: true });
    writeFileSync(
      join(WORK, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          rootDir: 'src',
          outDir: 'dist',
          types: ['node'],
          skipLibCheck: true,
        },
        include: ['src'],
      }),
    );
    writeFileSync(join(WORK, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    for (const b of all)
      writeFileSync(join(WORK, 'src', `${b.name}.ts`), `// ${b.where}\n${b.code}\nexport {};\n`);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const compiled = await run(process.execPath, [tsc, '-p', WORK]).then(
      () => '',
      (e: { stdout?: string }) => e.stdout ?? String(e),
    );
    // Name the doc line of each error: src/<page>-<line>.ts(l,c) is that block's line l - 1.
    expect(
      compiled.replace(
        /src\/([A-Za-z-]+)-(\d+)\.ts\((\d+),\d+\)/g,
        (_m, page, start, l) => `docs/${page}.md:${Number(start) + Number(l) - 2}`,
      ),
    ).toBe('');
    const failures: string[] = [];
    const queue = [...all];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let b = queue.shift(); b; b = queue.shift()) {
          const file = join(WORK, 'dist', `${b.name}.js`);
          await run(process.execPath, [file], { timeout: 30_000 }).catch((e: { stderr?: string }) =>
            failures.push(`${b.where}: ${(e.stderr ?? String(e)).split('\n').slice(0, 8).join('\n')}`),
          );
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(all.length).toBeGreaterThan(20);
  }, 300_000);
});

/** The cells of each row of the markdown table whose header row opens with `| first `. */
function tableRows(page: string, first: string): string[][] {
  const lines = readFileSync(join(DOCS, page), 'utf8').split('\n');
  const at = lines.findIndex((l) => l.startsWith(`| ${first} `));
  const rows: string[][] = [];
  for (let i = at + 2; lines[i]?.startsWith('|'); i++)
    rows.push(
      lines[i]!.split('|')
        .slice(1, -1)
        .map((c) => c.trim().replaceAll('`', '')),
    );
  return rows;
}

describe('docs/errors.md', () => {
  it('gives each code the kind, and each kind the HTTP status, of the engine’s tables', () => {
    const kinds: Record<string, string> = {};
    for (const [codes, , , , kind] of tableRows('errors.md', 'code'))
      for (const code of codes!.split(', ')) kinds[code] = kind!;
    expect(kinds).toEqual(ERROR_KINDS);
    const statuses = Object.fromEntries(
      tableRows('errors.md', 'kind').map(([kind, , , http]) => [kind!, Number(http)]),
    );
    expect(statuses).toEqual(HTTP_STATUS satisfies Record<ErrorKind, number>);
  });
});
