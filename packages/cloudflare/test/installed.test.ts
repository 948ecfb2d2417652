/**
 * The package as a user installs it: the engine and this package packed into tarballs with
 * `pnpm pack` (scripts/pack-all.mjs, as `pnpm pack:all` and pack-check do), installed with npm
 * into a project outside the workspace, the template wrangler.toml copied from the installed
 * package, a user's Worker bundled from there with esbuild and run in workerd through Miniflare:
 * an order is started, approved, its sleep and retry alarms ring, and it completes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTarball, packAll } from '../../../scripts/pack-all.mjs';
import { api, type Bundle, bundleWorker, startWorker } from './workerd-harness.js';
import { readWranglerToml } from './wrangler-toml.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'stepfold-cloudflare-'));
const app = join(work, 'app');
let bundle: Bundle;
let mf: Miniflare;

beforeAll(async () => {
  const packed = packAll(join(work, 'tarballs'), () => {}, ['engine', 'cloudflare']);
  for (const { file } of packed) expect(checkTarball(file)).toEqual([]);

  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  // The engine's own dependencies (croner) come from the registry, or npm's cache when it has them:
  // `--offline` failed on a machine whose npm cache was empty.
  execFileSync(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...packed.map((p) => p.file),
    ],
    { cwd: app, stdio: 'pipe' },
  );
  copyFileSync(
    join(app, 'node_modules/@stepfold/cloudflare/templates/wrangler.toml'),
    join(app, 'wrangler.toml'),
  );
  const config = readWranglerToml(readFileSync(join(app, 'wrangler.toml'), 'utf8'));
  copyFileSync(join(here, 'fixtures/user-worker.ts'), join(app, config.main));

  bundle = await bundleWorker(join(app, config.main), join(app, 'dist/worker.js'));
  mf = await startWorker(bundle, config, { SHOP: 'installed' });
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  rmSync(work, { recursive: true, force: true });
});

describe('@stepfold/cloudflare installed from its tarball', () => {
  it('bundles from the installed packages alone, with nothing left to import', () => {
    expect(bundle.imports).toEqual([]);
    expect(
      bundle.inputs.filter((p) => p.includes('node_modules/@stepfold/cloudflare/dist/')).length,
    ).toBeGreaterThan(0);
    expect(
      bundle.inputs.filter((p) => p.includes('node_modules/@stepfold/engine/dist/')).length,
    ).toBeGreaterThan(0);
    // Nothing from the workspace's sources.
    expect(bundle.inputs.filter((p) => p.includes('packages/'))).toEqual([]);
  });

  it('starts an order, approves it, lets its alarms ring and completes it, leaving no alarm', async () => {
    const http = api(mf, '/api');
    const started = await http.call('POST', '/workflows/order/instances/order-1', {
      sku: 'BOOK-7',
      chargeFailures: 1,
    });
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('waiting');
    expect(started.body.steps.reserve?.output).toEqual({ reservation: 'installed:BOOK-7' });

    const approved = await http.call('POST', '/instances/order-1/signals/approval', { decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body.steps['cool-off']?.status).toBe('active');

    // The sleep's alarm (1 s), the failed charge's retry alarm (500 ms): only the alarms move it.
    const done = await http.until('order-1', (s) => s.status === 'completed');
    expect(done.status).toBe('completed');
    expect(done.steps.charge).toMatchObject({ status: 'completed', attempt: 2 });
    expect(await http.object('order-1', '/test/alarm')).toMatchObject({ alarm: null, errors: null });
  });
});
