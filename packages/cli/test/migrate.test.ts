import { createRunner, type WorkflowDefinition } from '@stepfold/engine';
import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed, uniqueName } from './cli.js';

// `stepfold migrate` on PostgreSQL: three orders wait in `approve` (renamed `review` in v2), one
// waits in `legacy` (removed in v2). The dry run reports both and can gate a deploy; the real
// run moves the three and refuses the fourth.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const MODULE = 'packages/cli/test/fixtures/order-migration.mjs';
const REASON = 'step "legacy" (active) has no place in v2';

describe('stepfold migrate (postgres)', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  pool.on('error', () => {});
  const schema = uniqueName('mig');
  let store: PostgresStore;
  let url: string;

  beforeAll(async () => {
    store = createPostgresStore({ pool, schema });
    await store.setup();
    const u = new URL(PG_URL);
    u.searchParams.set('schema', schema);
    url = u.toString();
    // A module of the user's, imported by URL as the CLI does (no types to check it against).
    const fixture = new URL('./fixtures/order-migration.mjs', import.meta.url).href;
    const { orderV1 } = (await import(fixture)) as { orderV1: WorkflowDefinition };
    const runner = createRunner({ store, workflows: [orderV1], execute: false });
    for (const id of ['o-1', 'o-2', 'o-3']) await runner.start('cli-order', id, {});
    await runner.start('cli-order', 'o-legacy', { legacy: true });
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('--dry-run reports outcomes and reasons, with progress on stderr, writing nothing', async () => {
    const r = await cli(['migrate', '--store', url, '--migration', MODULE, '--all', '--dry-run', '--json']);
    expect(r.code).toBe(EXIT.ok);
    const report = parsed<{ total: number; outcomes: unknown; reasons: unknown[] }>(r);
    expect(report.total).toBe(4);
    expect(report.outcomes).toEqual({ migratable: 3, refused: 1, finished: 0, otherVersion: 0 });
    expect(report.reasons).toEqual([{ reason: REASON, count: 1, samples: ['o-legacy'] }]);
    expect(r.stderr).toContain('migrate: 4 read · 3 migratable · 1 refused');
    expect((await store.load('o-1'))?.workflow.version).toBe(1);
  });

  it('--fail-on-refused makes the dry run a deploy gate (exit 4), the table still printed', async () => {
    const r = await cli([
      'migrate',
      '--store',
      url,
      '--migration',
      `${MODULE}#toV2`,
      '--all',
      '--dry-run',
      '--fail-on-refused',
    ]);
    expect(r.code).toBe(EXIT.refused);
    expect(r.stdout).toContain(REASON);
    expect(r.stdout).toMatch(/migratable\s+3/);
  });

  it('moves one instance, refuses another (MIGRATION_REFUSED, exit 4), then moves all that can', async () => {
    const base = ['migrate', '--store', url, '--migration', MODULE, '--definitions', MODULE, '--json'];
    const one = await cli([...base, '--id', 'o-1']);
    expect(one.code).toBe(EXIT.ok);
    expect(parsed<{ workflow: { version: number } }>(one).workflow.version).toBe(2);

    const before = JSON.stringify(await store.load('o-legacy'));
    const refused = await cli([...base, '--id', 'o-legacy']);
    expect(refused.code).toBe(EXIT.refused);
    expect(parsed<{ error: { code: string; message: string } }>(refused).error.code).toBe(
      'MIGRATION_REFUSED',
    );
    expect(JSON.stringify(await store.load('o-legacy'))).toBe(before);

    const all = await cli([...base, '--all', '--status', 'waiting']);
    expect(all.code).toBe(EXIT.ok);
    expect(parsed<{ outcomes: unknown }>(all).outcomes).toEqual({
      migrated: 2,
      refused: 1,
      conflicted: 0,
      finished: 0,
      otherVersion: 1,
    });
    for (const id of ['o-1', 'o-2', 'o-3']) expect((await store.load(id))?.active).toEqual(['review']);
  });

  it('needs exactly one of --id and --all, and the definitions for a real run (exit 2)', async () => {
    const neither = await cli(['migrate', '--store', url, '--migration', MODULE]);
    expect(neither.code).toBe(EXIT.usage);
    const noDefs = await cli(['migrate', '--store', url, '--migration', MODULE, '--all']);
    expect(noDefs.code).toBe(EXIT.usage);
    expect(noDefs.stderr).toContain('--definitions');
  });
});
