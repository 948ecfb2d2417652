// Packs every package into one folder, the way the packages are installed until they are on the
// npm registry. `pnpm pack:all` builds first, then runs this: tarballs land in ./packed (git-ignored)
// and the npm and pnpm lines that install them are printed. scripts/pack-check/run.mjs packs with
// the same functions, and checks what they make.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
/** Every published package, by folder under packages/, in dependency order. */
export const PACKAGES = [
  'engine',
  'store-postgres',
  'store-redis',
  'store-mongo',
  'store-dynamo',
  'node',
  'otel',
  'ai',
  'inspector',
  'asl',
  'cli',
  'cloudflare',
  'aws-lambda',
  'aws-cdk',
];
/** Where the repository lives: absolute links in packed READMEs start here. */
export const REPOSITORY = 'https://github.com/stepfold/stepfold';

/** A package's manifest. */
export const manifest = (dir) =>
  JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));

/**
 * Packs each package (`pnpm pack`: workspace ranges become versions) into `dest`, emptied of
 * tarballs first; `dirs` picks some (default: all). Returns `{ name, file }` per package, `file`
 * the tarball's absolute path.
 */
export function packAll(dest, log = () => {}, dirs = PACKAGES) {
  mkdirSync(dest, { recursive: true });
  for (const f of readdirSync(dest)) if (f.endsWith('.tgz')) rmSync(join(dest, f));
  return dirs.map((dir, i) => {
    const { name, version } = manifest(dir);
    log(`packing ${name}@${version} (${i + 1}/${dirs.length})`);
    execFileSync('pnpm', ['pack', '--pack-destination', dest], {
      cwd: join(ROOT, 'packages', dir),
      stdio: 'pipe',
    });
    const file = join(dest, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
    if (!existsSync(file)) throw new Error(`pnpm pack made no ${file}`);
    return { name, file };
  });
}

/**
 * pnpm `overrides` sending every @stepfold package to its tarball: the packages name each other
 * by version (the CLI depends on the stores, the adapters have the engine as a peer), and pnpm
 * would ask the registry for those. npm takes the tarballs installed beside them instead.
 */
export const overridesFor = (packed) =>
  Object.fromEntries(packed.map(({ name, file }) => [name, `file:${file}`]));

/**
 * What is wrong with a tarball as shipped: a missing LICENSE (or one that is not the repository's),
 * or a README link that is relative and points outside the package (it would not resolve on npm or
 * in node_modules). Returns the problems, none when it is fine.
 */
export function checkTarball(file) {
  const list = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const read = (path) => execFileSync('tar', ['-xzOf', file, path], { encoding: 'utf8' });
  const problems = [];
  if (!list.includes('package/LICENSE')) problems.push('no LICENSE');
  else if (read('package/LICENSE') !== readFileSync(join(ROOT, 'LICENSE'), 'utf8'))
    problems.push('LICENSE differs from the repository’s');
  if (!list.includes('package/README.md')) return [...problems, 'no README.md'];
  const readme = read('package/README.md');
  for (const [, target] of readme.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue; // https:, mailto:, an anchor
    const path = target.split('#')[0];
    const inside = join('package', path);
    if (
      path.startsWith('/') ||
      !inside.startsWith('package/') ||
      !list.some((f) => f === inside || f.startsWith(`${inside}/`))
    )
      problems.push(`README links to ${target}, which the package does not ship`);
  }
  return problems;
}

/** The lines that install the tarballs, with npm and with pnpm. */
export function installLines(packed) {
  const files = packed.map((p) => p.file);
  const pnpm = JSON.stringify({ pnpm: { overrides: overridesFor(packed) } }, null, 2);
  return [
    'npm (pick the tarballs you use; the CLI needs the engine, inspector and store tarballs beside it):',
    `  npm install ${files.join(' ')}`,
    '',
    'pnpm: first add these overrides to your package.json, then add the tarballs you use:',
    pnpm
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
    `  pnpm add ${files.join(' ')}`,
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dest = join(ROOT, 'packed');
  const log = (msg) => console.log(`[pack:all] ${msg}`);
  log(`packing ${PACKAGES.length} packages into ${dest}`);
  const packed = packAll(dest, log);
  let bad = false;
  for (const { name, file } of packed) {
    const problems = checkTarball(file);
    for (const p of problems) console.error(`[pack:all] ${name}: ${p}`);
    bad ||= problems.length > 0;
  }
  if (bad) process.exit(1);
  log(`done: ${packed.length} tarballs in ${dest}\n`);
  console.log(installLines(packed));
}
