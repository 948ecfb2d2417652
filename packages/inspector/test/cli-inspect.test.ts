import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// `stepfold inspect` as a user runs it: the compiled CLI in a child process, over PostgreSQL.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));
const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const ENV = { ...process.env, STEPFOLD_STORE: '', STEPFOLD_DEFINITIONS: '', STEPFOLD_INSPECT_TOKEN: '' };

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...ENV, ...env } },
      (error, _out, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('stepfold inspect', () => {
  let child: ChildProcess | undefined;
  const schema = `inspector_cli_${process.pid}_${Date.now().toString(36)}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const storeUrl = url.toString();
  beforeAll(async () => {
    pool.on('error', () => {});
    await createPostgresStore({ pool, schema }).setup();
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });
  afterEach(() => {
    child?.kill('SIGTERM');
    child = undefined;
  });

  it('refuses to start without a token (exit 2)', async () => {
    expect(existsSync(BIN), 'run `pnpm build` first').toBe(true);
    const r = await run(['inspect', '--store', storeUrl, '--definitions', 'examples/cli']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('inspect needs a token');
  });

  it('serves the inspector, prints its URL, and stops on SIGTERM', async () => {
    const proc = spawn(
      process.execPath,
      [BIN, 'inspect', '--store', storeUrl, '--definitions', 'examples/cli', '--port', '0'],
      { cwd: ROOT, env: { ...ENV, STEPFOLD_INSPECT_TOKEN: 'cli-token-123456' } },
    );
    child = proc;
    const served = await new Promise<string>((resolve, reject) => {
      let out = '';
      proc.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      proc.once('exit', (code) => reject(new Error(`exited ${code} before listening: ${out}`)));
    });
    expect((await fetch(served)).status).toBe(401);
    const page = await fetch(served, { headers: { Authorization: 'Bearer cli-token-123456' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Instances</h1>');
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;
  });
});
