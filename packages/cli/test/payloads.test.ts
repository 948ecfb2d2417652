import {
  createRunner,
  isPayloadRef,
  offloading,
  type PayloadRef,
  type Snapshot,
  workflow,
} from '@stepfold/engine';
import { createPostgresPayloadStore, createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed, uniqueName } from './cli.js';

// `show` over a real PostgreSQL store whose instances a runner with offloading wrote: references
// print compactly, `--resolve` fetches them through the payload store the URL names.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, label: `row ${i}` }));
const report = workflow('report', 1)
  .task('fetch', { handler: 'fetchRows', offload: { keep: ['status', 'count'] } })
  .build();

describe('show with offloaded payloads on PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  pool.on('error', () => {});
  const schema = uniqueName('payloads');
  const store = createPostgresStore({ pool, schema });
  const payloadStore = createPostgresPayloadStore({ pool, schema });
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  url.searchParams.set('payloadSchema', schema);
  const storeUrl = url.toString();
  const bigInput = { note: 'x'.repeat(3000) };

  beforeAll(async () => {
    await store.setup();
    await payloadStore.setup();
    const runner = createRunner({
      store,
      workflows: [report],
      payloads: offloading({ store: payloadStore, threshold: 1024 }),
      handlers: { fetchRows: () => ({ status: 'ok', count: rows.length, rows }) },
    });
    for (const id of ['rep-1', 'rep-gone']) {
      expect((await runner.start('report', id, bigInput)).status).toBe('completed');
    }
    // The bodies of one instance disappear (a cleanup job run against the wrong id, say).
    await payloadStore.deleteOwner('rep-gone');
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('prints each reference compactly where its value would be, and lists them', async () => {
    const stored = (await store.load('rep-1'))!;
    const ref = stored.steps['fetch']?.output as PayloadRef;
    expect(isPayloadRef(ref)).toBe(true);
    const r = await cli(['show', 'rep-1', '--store', storeUrl]);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    const compact = `‹payload ${(ref.bytes / 1000).toFixed(1)} kB sha ${ref.sha256.slice(0, 8)}… keep {status: "ok", count: 400}›`;
    expect(r.stdout).toContain(`  fetch  completed  attempt 1  ${compact}`);
    expect(r.stdout).toMatch(/^ {2}input: ‹payload 3\.0 kB sha [0-9a-f]{8}…›$/m);
    // The workflow's output is the step's: one payload in two places.
    expect(r.stdout).toContain(
      `payloads: 2 offloaded (${((ref.bytes + 3011) / 1000).toFixed(1)} kB) in 3 places`,
    );
    expect(r.stdout).toContain(`  output  ${compact}`);
    expect(r.stdout).toContain(`  steps.fetch.output  ${compact}`);
    expect(r.stdout).toContain('fetch them with --resolve');
    expect(r.stdout).not.toContain('row 1');
  });

  it('--json gives the references as stored', async () => {
    const s = parsed<Snapshot>(await cli(['show', 'rep-1', '--store', storeUrl, '--json']));
    expect(isPayloadRef(s.input)).toBe(true);
    expect(s.steps['fetch']?.output).toEqual((await store.load('rep-1'))!.steps['fetch']?.output);
  });

  it('--json --resolve gives the resolved snapshot', async () => {
    const s = parsed<Snapshot>(await cli(['show', 'rep-1', '--store', storeUrl, '--json', '--resolve']));
    expect(s.input).toEqual(bigInput);
    expect(s.steps['fetch']?.output).toEqual({ status: 'ok', count: rows.length, rows });
  });

  it('--resolve prints the values in place of the references', async () => {
    const r = await cli(['show', 'rep-1', '--store', storeUrl, '--resolve']);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    expect(r.stdout).toContain('  input: {"note":"xxx');
    expect(r.stdout).toContain('  fetch  completed  attempt 1  {"status":"ok","count":400,"rows":[{');
    expect(r.stdout).toContain('resolved above');
  });

  it('a missing body is PAYLOAD_NOT_FOUND (exit 3) naming where the reference is', async () => {
    const r = await cli(['show', 'rep-gone', '--store', storeUrl, '--resolve']);
    expect(r.code).toBe(EXIT['not-found']);
    expect(r.stderr).toMatch(
      /^error PAYLOAD_NOT_FOUND: payload [0-9a-f]{12} of "rep-gone" .*rep-gone at (input|steps\.fetch\.output) refers to it/,
    );
    const j = await cli(['show', 'rep-gone', '--store', storeUrl, '--resolve', '--json']);
    expect(j.code).toBe(EXIT['not-found']);
    expect(parsed<{ error: { code: string } }>(j).error.code).toBe('PAYLOAD_NOT_FOUND');
    // Without --resolve nothing is fetched: the references show as they are.
    expect((await cli(['show', 'rep-gone', '--store', storeUrl])).code).toBe(EXIT.ok);
  });

  it('takes the payload table from the URL: another table holds nothing, a bad name is a usage error', async () => {
    const other = new URL(storeUrl);
    other.searchParams.set('payloadTable', 'Bad-Name');
    const bad = await cli(['show', 'rep-1', '--store', other.toString(), '--resolve', '--json']);
    expect(bad.code).toBe(EXIT.usage);
    expect(parsed<{ error: { code: string } }>(bad).error.code).toBe('USAGE');
    const empty = createPostgresPayloadStore({ pool, schema, table: 'other_payloads' });
    await empty.setup();
    other.searchParams.set('payloadTable', 'other_payloads');
    const missing = await cli(['show', 'rep-1', '--store', other.toString(), '--resolve']);
    expect(missing.code).toBe(EXIT['not-found']);
    expect(missing.stderr).toContain('PAYLOAD_NOT_FOUND');
  });
});
