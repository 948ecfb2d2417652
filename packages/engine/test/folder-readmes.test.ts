import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Each engine folder has a README.md naming every file and subfolder in it, so a reader finds a
// module from its folder's page. A subfolder without a README of its own is covered by the nearest
// README above it, which then names its files by their path from there (`kinds/map.ts`).

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../src');

/** The folders under `src` (not `src` itself), as paths relative to it. */
function folders(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => {
      const path = join(dir, d.name);
      return [posix.normalize(relative(SRC, path)), ...folders(path)];
    });
}

/** The folder whose README covers `folder`: itself, or the nearest one above with a README. */
function coveringReadme(folder: string): string | undefined {
  for (let f = folder; f !== '.'; f = posix.dirname(f)) {
    if (existsSync(join(SRC, f, 'README.md'))) return f;
  }
  return undefined;
}

/** True when `text` names `path` on its own: not as the tail of a longer path or name. */
function names(text: string, path: string): boolean {
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w./-])${escaped}(?![\\w/-]|\\.\\w)`).test(text);
}

/** The names of every file under `folder`, at any depth. */
function allFileNames(folder: string): Set<string> {
  const dir = join(SRC, folder);
  return new Set(
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((d) => d.isFile())
      .map((d) => d.name),
  );
}

/** What the README of `folder` must name: its entries, and those of subfolders it covers. */
function entriesCoveredBy(folder: string): string[] {
  const out: string[] = [];
  const walk = (sub: string) => {
    for (const d of readdirSync(join(SRC, folder, sub), { withFileTypes: true })) {
      if (d.name === 'README.md' && sub === '') continue;
      const path = sub ? `${sub}/${d.name}` : d.name;
      if (!d.isDirectory()) out.push(path);
      else if (existsSync(join(SRC, folder, path, 'README.md'))) out.push(`${path}/`);
      else {
        out.push(`${path}/`);
        walk(path);
      }
    }
  };
  walk('');
  return out;
}

describe('engine folder READMEs', () => {
  const top = folders().filter((f) => !f.includes('/'));

  it('every top-level engine folder has a README.md', () => {
    expect(top.filter((f) => !existsSync(join(SRC, f, 'README.md')))).toEqual([]);
  });

  for (const folder of folders().filter((f) => coveringReadme(f) === f)) {
    it(`${folder}/README.md names every file in its folder`, () => {
      const text = readFileSync(join(SRC, folder, 'README.md'), 'utf8');
      const unnamed = entriesCoveredBy(folder).filter(
        (path) => !names(text, path) && !(path.endsWith('/') && names(text, path.slice(0, -1))),
      );
      expect(unnamed).toEqual([]);
    });

    it(`${folder}/README.md names no file its folder lacks`, () => {
      const text = readFileSync(join(SRC, folder, 'README.md'), 'utf8');
      // A bare `name.ts` in backticks is a file of this folder or one below it (paths with a slash
      // may point elsewhere).
      const named = [...text.matchAll(/`([\w-]+\.ts)`/g)].map((m) => m[1]!);
      const present = allFileNames(folder);
      expect(named.filter((n) => !present.has(n))).toEqual([]);
    });
  }
});
