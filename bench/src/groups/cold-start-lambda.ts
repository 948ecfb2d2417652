import { spawn } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { backends, serverNote } from '../backends.js';
import { percentile } from '../peers/common.js';
import { costRow, type Group, type Row } from '../row.js';

// cold-start-lambda: how long a fresh Node process takes to its first handled event with the
// example's deployable module (examples/lambda-dynamo/src/lambda.ts) bundled as one would ship it
// to Lambda: spawn node, import the bundle (which creates the clients and the app at load, as on
// Lambda), call `api` with a GET of a missing instance (one GetItem against moto, answered 404),
// and print. Baseline: a bare `node -e ''` from spawn to exit. Wall time in this process from
// spawn to the line (ours) or the exit (bare); fresh processes, alternating, median.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ENTRY = `${ROOT}examples/lambda-dynamo/src/lambda.ts`;
// In bench/dist, so the external variant resolves `@aws-sdk/*` from the bench's node_modules.
const OUT = fileURLToPath(new URL('../cold-start/', import.meta.url));
const RUNS = 11;
const WARM = 2;
const MARK = 'BENCH_ANSWERED ';

const CHILD = `
const m = await import(process.env.BENCH_BUNDLE);
const imported = performance.now();
const path = '/instances/bench-missing';
const r = await m.api({ version: '2.0', rawPath: path, rawQueryString: '', headers: {},
  requestContext: { stage: '$default', http: { method: 'GET', path } }, isBase64Encoded: false });
process.stdout.write('\\n${MARK}' + JSON.stringify({ status: r.statusCode, imported, ms: performance.now() }) + '\\n');
process.exit(0);
`;

/** Bundles the example's handler module: ESM, platform node, minified; the SDK in or left out. */
async function bundleHandler(sdk: 'bundled' | 'external'): Promise<{ file: string; bytes: number }> {
  const { build } = await import('esbuild');
  const file = `${OUT}lambda-${sdk}.mjs`;
  await build({
    entryPoints: [ENTRY],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    mainFields: ['module', 'main'],
    ...(sdk === 'external' ? { external: ['@aws-sdk/*'] } : {}),
    // CommonJS parts of the bundle may require Node built-ins: give them a `require`.
    banner: { js: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);" },
    logLevel: 'silent',
  });
  return { file, bytes: statSync(file).size };
}

interface Sample {
  /** Spawn → the answer printed (ours) or the exit (bare), ms of this process's clock. */
  wallMs: number;
  /** The child's own clock (from its time origin) once the bundle was imported, ms. */
  importedMs?: number;
  /** The child's own clock at the answer, ms. */
  childMs?: number;
  status?: number;
}

/** One fresh process; resolves at the marked line (with a bundle) or at exit (bare). */
function once(env: NodeJS.ProcessEnv, bundle?: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const args = bundle ? ['--input-type=module', '-e', CHILD] : ['-e', ''];
    const t0 = performance.now();
    const child = spawn(process.execPath, args, {
      env: bundle ? { ...env, BENCH_BUNDLE: pathToFileURL(bundle).href } : env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let sample: Sample | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const at = out.indexOf(MARK);
      if (sample || at < 0 || !out.slice(at).includes('\n')) return;
      const wallMs = performance.now() - t0;
      const line = JSON.parse(out.slice(at + MARK.length).split('\n')[0]!) as {
        status: number;
        imported: number;
        ms: number;
      };
      sample = { wallMs, importedMs: line.imported, childMs: line.ms, status: line.status };
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!bundle && code === 0) resolve({ wallMs: performance.now() - t0 });
      else if (sample) resolve(sample);
      else reject(new Error(`cold-start child exited ${code}: ${err || out}`));
    });
  });
}

const median = (xs: number[]) => percentile(xs, 50);
const round = (x: number) => Math.round(x * 10) / 10;

export const coldStartLambda: Group = {
  name: 'cold-start-lambda',
  async run(): Promise<Row[]> {
    const b = backends.find((x) => x.name === 'dynamo')!;
    const name = 'cold-start-lambda';
    const down = await b.unavailable();
    if (down) return [{ ...costRow(name, null, null, 'ms', null), note: `not measured: ${down}` }];
    mkdirSync(OUT, { recursive: true });
    const bundled = await bundleHandler('bundled');
    const external = await bundleHandler('external');
    const config = {
      endpoint: b.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    };
    const client = new DynamoDBClient({ ...config, maxAttempts: 3 });
    const table = `bench_cold_start_${Date.now().toString(36)}`;
    await createDynamoStore({ client, table, dueShards: 1 }).setup();
    // What a deployed function has: its variables, no shared config files needed.
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'],
      STEPFOLD_TABLE: table,
      AWS_ENDPOINT_URL_DYNAMODB: b.url,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'stepfold',
      AWS_SECRET_ACCESS_KEY: 'stepfold',
    };
    const bare: Sample[] = [];
    const ours: Sample[] = [];
    const sdkExternal: Sample[] = [];
    try {
      for (let i = 0; i < RUNS + WARM; i++) {
        // Alternating order: bare, bundled, external, then the reverse.
        const order = i % 2 === 0 ? (['b', 'o', 'e'] as const) : (['e', 'o', 'b'] as const);
        for (const which of order) {
          const s =
            which === 'b' ? await once(env) : await once(env, which === 'o' ? bundled.file : external.file);
          if (s.status !== undefined && s.status !== 404)
            throw new Error(`cold-start: the GET of a missing instance answered ${s.status}`);
          if (i < WARM) continue;
          (which === 'b' ? bare : which === 'o' ? ours : sdkExternal).push(s);
        }
      }
    } finally {
      await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
      client.destroy();
    }
    const wall = (xs: Sample[]) => xs.map((s) => round(s.wallMs));
    const child = (xs: Sample[], k: 'importedMs' | 'childMs') => xs.map((s) => round(s[k] ?? Number.NaN));
    const kb = (n: number) => Math.round(n / 102.4) / 10;
    const esbuild = (await import('esbuild')).version;
    const externalMs = median(wall(sdkExternal));
    const importMs = median(child(ours, 'importedMs'));
    const note = `fresh \`node\` → import the example's handler module (examples/lambda-dynamo/src/lambda.ts) bundled by esbuild ${esbuild} (ESM, platform node, minified, AWS SDK v3 bundled in: ${kb(bundled.bytes)} KB) → \`api\` GET of a missing instance (one GetItem, answered 404) → printed; baseline: a bare \`node -e ''\` to its exit; wall time from spawn, in the parent, median of ${RUNS} fresh processes each, alternating (the import alone: ${importMs} ms of the child's clock, median). The same bundle with \`@aws-sdk/*\` external, as Lambda's Node runtime ships SDK v3 (${kb(external.bytes)} KB, the SDK then loaded from node_modules): ${externalMs} ms. Informational: no Lambda sandbox here; the GetItem goes to ${serverNote(b)}`;
    return [
      costRow(name, median(wall(ours)), median(wall(bare)), 'ms', null, {
        note,
        details: {
          runs: RUNS,
          bundledBytes: bundled.bytes,
          externalBytes: external.bytes,
          bundled: wall(ours),
          bundledImportedMs: child(ours, 'importedMs'),
          bundledChildMs: child(ours, 'childMs'),
          external: wall(sdkExternal),
          externalImportedMs: child(sdkExternal, 'importedMs'),
          externalChildMs: child(sdkExternal, 'childMs'),
          bare: wall(bare),
        },
      }),
    ];
  },
};
