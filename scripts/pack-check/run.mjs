// Packaging check: packs every package as `pnpm pack:all` does (scripts/pack-all.mjs), checks each
// tarball (LICENSE shipped, no README link outside the package) and lints it with publint and "are
// the types wrong", then installs the tarballs into fresh projects outside the workspace, once with
// npm and once with pnpm (with the overrides the README tells pnpm users to add), type-checks a
// consumer program under moduleResolution node16 and bundler, and runs it, then runs the CLI's
// `stepfold run` on an example through npx. Last, it type-checks the same program with the oldest
// and the newest TypeScript the packages support (TS_RANGE), and installs @stepfold/aws-cdk in a
// project of its own (CDK_ONLY, below) to synthesize a stack. `pnpm pack-check`; CI runs it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTarball, overridesFor, PACKAGES, packAll, ROOT } from '../pack-all.mjs';

// What the installed CLI runs: an example definition and its handlers, copied into the fresh project.
const CLI_EXAMPLE = ['order-saga.yaml', 'handlers.mjs'];
/** The exact version the workspace itself pins for a package (root or an adapter's devDependencies). */
function pinned(name) {
  for (const dir of ['.', ...PACKAGES.map((p) => `packages/${p}`)]) {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8'));
    const version = pkg.devDependencies?.[name];
    if (version) return `${name}@${version}`;
  }
  throw new Error(`${name} is pinned nowhere in the workspace`);
}
const DRIVERS = [
  'pg',
  '@types/pg',
  'ioredis',
  'mongodb',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-sqs',
  '@aws-sdk/client-scheduler',
  '@opentelemetry/api',
].map(pinned);
// @types/node 24: pg's own typings need its generic Buffer, and the consumer check reads every .d.ts (skipLibCheck off).
const TOOLS = [pinned('typescript'), '@types/node@24.19.2'];

// The TypeScript versions the packages' types are checked with besides the workspace's own: the
// oldest supported (the types use NoInfer, new in 5.4) and the newest release. README.md states
// this range; change both together.
const TS_RANGE = ['5.4.5', '7.0.2'];

// Packed and linted like the others, but installed only in a project of its own
// (checkCdkConsumer): its peers, aws-cdk-lib (about 160 MB unpacked) and constructs, would be
// installed by npm and pnpm into both shared projects, and type-checked under every config and
// TypeScript of the range, for a program that does not use them.
const CDK_ONLY = ['@stepfold/aws-cdk'];
/** What the aws-cdk project installs besides the engine, store-dynamo and aws-cdk tarballs. */
const CDK_DEPS = ['aws-cdk-lib', 'constructs', '@aws-sdk/client-dynamodb'].map(pinned);

const step = (msg) => console.log(`[pack-check] ${msg}`);
function run(cmd, args, cwd, quiet = true) {
  try {
    return execFileSync(cmd, args, { cwd, stdio: quiet ? 'pipe' : 'inherit', encoding: 'utf8' });
  } catch (e) {
    console.error(
      `[pack-check] failed: ${cmd} ${args.join(' ')} (in ${cwd})\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
    process.exit(1);
  }
}

const work = mkdtempSync(join(tmpdir(), 'stepfold-pack-'));
const tarballs = join(work, 'tarballs');
step(`packing into ${tarballs}`);
const packed = packAll(tarballs, step);
const files = packed.filter((p) => !CDK_ONLY.includes(p.name)).map((p) => p.file);

for (const { name, file } of packed) {
  step(`contents of ${name}: LICENSE, README links`);
  const problems = checkTarball(file);
  if (problems.length) {
    console.error(`[pack-check] ${name}:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  step(`publint ${name}`);
  run('pnpm', ['exec', 'publint', '--strict', file], ROOT);
  step(`attw ${name}`);
  // ESM-only packages: the CommonJS `require` resolutions are out of scope; node10, node16 (ESM) and bundler are checked.
  run('pnpm', ['exec', 'attw', file, '--profile', 'esm-only', '--format', 'table-flipped'], ROOT);
}

const tsconfig = (moduleResolution, module, emit) => ({
  compilerOptions: {
    strict: true,
    // The strictest flags a consumer may use: our .d.ts files must hold under them too.
    exactOptionalPropertyTypes: true,
    noPropertyAccessFromIndexSignature: true,
    noUncheckedIndexedAccess: true,
    target: 'ES2022',
    module,
    moduleResolution,
    skipLibCheck: false,
    types: ['node'],
    ...(emit ? { outDir: 'dist' } : { noEmit: true }),
  },
  files: ['app.ts'],
});

for (const pm of ['npm', 'pnpm']) {
  const app = join(work, `${pm}-app`);
  mkdirSync(app);
  // The packages name each other by version and are not on the registry: npm takes the tarballs
  // installed beside them, pnpm asks the registry unless overrides send it to them (as the READMEs say).
  const overrides = overridesFor(packed);
  const manifest = { name: `${pm}-app`, private: true, type: 'module' };
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(pm === 'pnpm' ? { ...manifest, pnpm: { overrides } } : manifest, null, 2),
  );
  copyFileSync(join(import.meta.dirname, 'app.ts'), join(app, 'app.ts'));
  writeFileSync(
    join(app, 'tsconfig.node16.json'),
    JSON.stringify(tsconfig('node16', 'node16', true), null, 2),
  );
  writeFileSync(
    join(app, 'tsconfig.bundler.json'),
    JSON.stringify(tsconfig('bundler', 'preserve', false), null, 2),
  );
  step(`${pm}: installing the tarballs with ${DRIVERS.join(', ')}`);
  const deps = [...files, ...DRIVERS, ...TOOLS];
  if (pm === 'npm')
    run('npm', ['install', '--save-exact', '--no-audit', '--no-fund', '--loglevel=error', ...deps], app);
  else run('pnpm', ['add', '--save-exact', '--config.confirmModulesPurge=false', ...deps], app);
  for (const config of ['tsconfig.node16.json', 'tsconfig.bundler.json']) {
    step(`${pm}: tsc -p ${config}`);
    run(join(app, 'node_modules/.bin/tsc'), ['-p', config], app);
  }
  step(`${pm}: node dist/app.js`);
  const out = run(process.execPath, ['dist/app.js'], app);
  if (!out.includes('pack-check app: ok')) {
    console.error(out);
    process.exit(1);
  }
  for (const f of CLI_EXAMPLE) copyFileSync(join(ROOT, 'examples/cli', f), join(app, f));
  step(`${pm}: npx stepfold run ${CLI_EXAMPLE[0]} --handlers ${CLI_EXAMPLE[1]}`);
  // run() stops on a non-zero exit: stepfold run exits 0 only when the workflow completed.
  const cli = run('npx', ['--no', 'stepfold', 'run', CLI_EXAMPLE[0], '--handlers', CLI_EXAMPLE[1]], app);
  if (!cli.includes('status: completed')) {
    console.error(cli);
    process.exit(1);
  }
}
checkTypeScriptRange(join(work, 'npm-app'));
checkCdkConsumer();
rmSync(work, { recursive: true, force: true });
step('all packages pack, lint, resolve and run from a fresh npm and pnpm install; so does the CLI');
step(`their types check with TypeScript ${TS_RANGE.join(' and ')} too`);
step('@stepfold/aws-cdk synthesizes a stack from a fresh npm install');

/**
 * Installs the aws-cdk tarball with the engine and store-dynamo tarballs and its peers in a fresh
 * npm project, type-checks `cdk-app.ts` under node16 with the consumer's strict flags, and runs it:
 * it synthesizes a stack with the construct and checks the table against `tableDefinition`.
 */
function checkCdkConsumer() {
  const app = join(work, 'cdk-app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'cdk-app', private: true, type: 'module' }, null, 2),
  );
  copyFileSync(join(import.meta.dirname, 'cdk-app.ts'), join(app, 'cdk-app.ts'));
  const config = tsconfig('node16', 'node16', true);
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ ...config, files: ['cdk-app.ts'] }, null, 2));
  const tarballs = packed
    .filter((p) => ['@stepfold/engine', '@stepfold/store-dynamo', ...CDK_ONLY].includes(p.name))
    .map((p) => p.file);
  step(`aws-cdk: installing its tarball with ${CDK_DEPS.join(', ')}`);
  const deps = [...tarballs, ...CDK_DEPS, ...TOOLS];
  run('npm', ['install', '--save-exact', '--no-audit', '--no-fund', '--loglevel=error', ...deps], app);
  step('aws-cdk: tsc -p tsconfig.json');
  // aws-cdk-lib's own typings do not hold under exactOptionalPropertyTypes with skipLibCheck off
  // (its classes declare `x: T | undefined` for an interface's `x?: T`): those are counted, not failed;
  // one in our .d.ts files or the program fails. tsc emits either way.
  let tscOut = '';
  try {
    execFileSync(join(app, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: app,
      stdio: 'pipe',
      encoding: 'utf8',
    });
  } catch (e) {
    tscOut = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const errors = tscOut.split('\n').filter((l) => l.includes('error TS'));
  const ours = errors.filter(
    (l) => !l.startsWith('node_modules/') || l.startsWith('node_modules/@stepfold/'),
  );
  if (ours.length || (tscOut && !errors.length)) {
    console.error(`[pack-check] aws-cdk: tsc\n  ${ours.length ? ours.join('\n  ') : tscOut}`);
    process.exit(1);
  }
  if (errors.length) step(`  (${errors.length} errors in aws-cdk-lib's own typings only)`);
  step('aws-cdk: node dist/cdk-app.js');
  const out = run(process.execPath, ['dist/cdk-app.js'], app);
  if (!out.includes('pack-check cdk app: ok')) {
    console.error(out);
    process.exit(1);
  }
}

/**
 * Type-checks the consumer program of `app` (installed with npm) with each TypeScript of TS_RANGE,
 * under both configs. An error in our .d.ts files or in the program fails; one inside a third
 * party's typings (a driver's) is that package's own TypeScript floor, so it is printed, not failed.
 */
function checkTypeScriptRange(app) {
  for (const version of TS_RANGE) {
    const dir = join(work, `typescript-${version}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{ "private": true }');
    step(`installing typescript@${version}`);
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `typescript@${version}`], dir);
    for (const config of ['tsconfig.node16.json', 'tsconfig.bundler.json']) {
      step(`typescript ${version}: tsc -p ${config}`);
      const tsc = join(dir, 'node_modules/.bin/tsc');
      const args = ['-p', config, '--noEmit', '--pretty', 'false'];
      let out = '';
      try {
        execFileSync(tsc, args, { cwd: app, stdio: 'pipe', encoding: 'utf8' });
      } catch (e) {
        out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
        if (!out.includes('error TS')) {
          console.error(`[pack-check] failed: ${tsc} ${args.join(' ')} (in ${app})\n${out}`);
          process.exit(1);
        }
      }
      const errors = out.split('\n').filter((l) => l.includes('error TS'));
      const theirs = errors.filter(
        (l) => l.startsWith('node_modules/') && !l.startsWith('node_modules/@stepfold/'),
      );
      const ours = errors.filter((l) => !theirs.includes(l));
      if (ours.length) {
        console.error(`[pack-check] typescript ${version}, ${config}:\n  ${ours.join('\n  ')}`);
        process.exit(1);
      }
      const files = [...new Set(theirs.map((l) => l.replace(/\(.*/, '')))];
      if (files.length) step(`  (errors in third-party typings only: ${files.join(', ')})`);
    }
  }
}
