import { cpSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRunner, type Snapshot, type WorkflowDefinition } from '@stepfold/engine';
import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceActions } from '../src/actions-view.js';
import { EXIT, RUN_EXIT } from '../src/exit-codes.js';
import { cli, parsed, ROOT, uniqueName } from './cli.js';

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

// A user's module, as they would write it: a builder workflow with zod schemas. The reservation is
// compensated; the charge is a pivot (no way back once it completed).
const REFUND_MODULE = `import { workflow } from '@stepfold/engine';
import { z } from 'zod';

export const refund = workflow('refund', 1)
  .input(z.object({ order: z.string() }))
  .signal('note', z.object({ reason: z.string() }))
  .task('reserve', { handler: 'reserve', compensate: 'release' })
  .human('approve')
  .task('charge', { handler: 'charge', pivot: true })
  .wait('await-note', { signal: 'note' })
  .build();

export const notADefinition = { hello: 'world' };
export default [refund];
`;

const HANDLERS_MODULE = `export const reserve = () => ({ held: true });
export const release = () => ({ released: true });
export const charge = () => ({ paid: true });
`;

/**
 * A temp project: the module, its handlers, and a node_modules where `@stepfold/engine` and `zod`
 * resolve to the workspace's (the engine the CLI imports, so the schemas' WeakMap is the same one).
 */
function project(): { dir: string; module: string; handlers: string } {
  const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-mod-'));
  mkdirSync(join(dir, 'node_modules', '@stepfold'), { recursive: true });
  symlinkSync(join(ROOT, 'packages/engine'), join(dir, 'node_modules/@stepfold/engine'), 'dir');
  // zod is the engine's dependency (the CLI has none): link the engine's copy.
  symlinkSync(
    realpathSync(join(ROOT, 'packages/engine/node_modules/zod')),
    join(dir, 'node_modules/zod'),
    'dir',
  );
  writeFileSync(join(dir, 'refund.mjs'), REFUND_MODULE);
  writeFileSync(join(dir, 'handlers.mjs'), HANDLERS_MODULE);
  writeFileSync(join(dir, 'empty.mjs'), 'export const answer = 42;\n');
  writeFileSync(join(dir, 'refund.ts'), REFUND_MODULE);
  return { dir, module: join(dir, 'refund.mjs'), handlers: join(dir, 'handlers.mjs') };
}

describe('definitions from an ESM module (PostgreSQL store)', () => {
  let p: ReturnType<typeof project>;
  let pool: pg.Pool;
  let schema: string;
  let store: PostgresStore;
  let url: string;
  const acting = () => ['--store', url, '--definitions', p.module, '--json'];
  const load = async (id: string): Promise<Snapshot> => (await store.load(id))!;

  beforeAll(async () => {
    p = project();
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    pool.on('error', () => {});
    schema = uniqueName('mod');
    store = createPostgresStore({ pool, schema });
    await store.setup();
    const u = new URL(PG_URL);
    u.searchParams.set('schema', schema);
    url = u.toString();
    // Seeded by the user's service: the same module, with handlers.
    const mod = (await import(pathToFileURL(p.module).href)) as { refund: WorkflowDefinition };
    const handlers = (await import(pathToFileURL(p.handlers).href)) as Record<string, () => unknown>;
    const runner = createRunner({ store, workflows: [mod.refund], handlers: { ...handlers } });
    await runner.start('refund', 'r-1', { order: 'A-1' });
    await runner.signal('r-1', 'approve', { decision: 'approve' }); // charged: past the pivot
    await runner.start('refund', 'r-2', { order: 'A-2' }); // reserved, waiting at approve
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  it('enforces the declared signal schema: signal and send exit 5 with the issues, nothing written', async () => {
    const before = await load('r-1');
    expect(before.active).toEqual(['await-note']);
    for (const command of ['signal', 'send']) {
      const r = await cli([command, 'r-1', 'note', '--payload', '{"reason":5}', ...acting()]);
      expect(r.code, command).toBe(EXIT.invalid);
      expect(r.stderr).toMatch(/^error INVALID_INPUT: signals\.note does not match its declared schema/);
      const error = parsed<{ error: { code: string; issues: { path: string }[] } }>(r).error;
      expect(error.code).toBe('INVALID_INPUT');
      expect(error.issues.map((i) => i.path)).toEqual(['signals.note.reason']);
    }
    // The same through STEPFOLD_DEFINITIONS, human output: the issue is printed.
    const env = await cli(['signal', 'r-1', 'note', '--payload', '{}', '--store', url], {
      STEPFOLD_DEFINITIONS: p.module,
    });
    expect(env.code).toBe(EXIT.invalid);
    expect(env.stderr).toContain('INVALID_INPUT');
    expect((await load('r-1')).version).toBe(before.version);
    expect(await store.inbox!.claim(Date.now(), 10, ['r-1'])).toEqual([]);
  });

  it('send writes a valid signal to the inbox and returns without applying it', async () => {
    const before = await load('r-1');
    const r = await cli([
      'send',
      'r-1',
      'note',
      '--payload',
      '{"reason":"late"}',
      '--signal-id',
      'n-1',
      ...acting(),
    ]);
    expect(r.code).toBe(EXIT.ok);
    expect(parsed(r)).toMatchObject({ delivered: 'inbox', changed: true, version: before.version });
    expect((await load('r-1')).version).toBe(before.version); // not applied yet
    const [waiting] = await store.inbox!.claim(Date.now(), 10, ['r-1']);
    expect(waiting?.sent.map((s) => s.event)).toMatchObject([
      { type: 'signal', name: 'note', payload: { reason: 'late' }, id: 'n-1' },
    ]);
    const human = await cli([
      'send',
      'r-2',
      'note',
      '--payload',
      '{"reason":"early"}',
      '--store',
      url,
      '--definitions',
      p.module,
    ]);
    expect(human.code).toBe(EXIT.ok);
    expect(human.stdout).toMatch(/^send note: written to the inbox; a worker applies it/);
  });

  it('show says cancel is not possible past the pivot, and which signals the instance takes now', async () => {
    const r = await cli(['show', 'r-1', '--store', url, '--definitions', p.module, '--json']);
    expect(r.code).toBe(EXIT.ok);
    const { actions } = parsed<{ actions: InstanceActions }>(r);
    expect(actions.cancel).toMatchObject({ possible: false, code: 'PAST_PIVOT' });
    expect(actions.abort.possible).toBe(true);
    expect(actions.signals).toEqual([{ name: 'note', steps: ['await-note'], decision: false, schema: true }]);
    const human = await cli(['show', 'r-1', '--store', url, '--definitions', p.module]);
    expect(human.stdout).toMatch(
      /cancel: not possible \(PAST_PIVOT\): pivot step charge has completed.*abort stops/,
    );
    expect(human.stdout).toContain(
      'signals taken now: note (waited for by await-note, payload schema declared)',
    );
    const before = parsed<{ actions: InstanceActions }>(
      await cli(['show', 'r-2', '--store', url, '--definitions', p.module, '--json']),
    ).actions;
    expect(before.cancel).toEqual({ possible: true });
    expect(before.signals.map((s) => [s.name, s.decision])).toEqual([['approve', true]]);
    const noDefs = await cli(['show', 'r-1', '--store', url]);
    expect(noDefs.stdout).toContain('actions: pass --definitions');
  });

  it('cancel past the pivot exits 4 saying abort still works; nothing written', async () => {
    const before = await load('r-1');
    const r = await cli(['cancel', 'r-1', '--store', url, '--definitions', p.module]);
    expect(r.code).toBe(EXIT.refused);
    expect(r.stderr).toMatch(/^error PAST_PIVOT: .*abort still works: `stepfold abort r-1`/);
    expect((await load('r-1')).version).toBe(before.version);
  });

  it('cancel of an instance already cancelling changes nothing: exit 8, and show says why', async () => {
    const first = await cli(['cancel', 'r-2', ...acting()]);
    expect(first.code).toBe(EXIT.ok);
    expect(parsed(first)).toMatchObject({
      status: 'compensating',
      queued: [{ step: 'reserve', phase: 'compensate' }],
    });
    const version = (await load('r-2')).version;
    const again = await cli(['cancel', 'r-2', ...acting()]);
    expect(again.code).toBe(EXIT.unchanged);
    expect(again.stderr).toBe('');
    expect(parsed(again)).toMatchObject({ changed: false, unchanged: 'r-2 is already being cancelled' });
    expect((await load('r-2')).version).toBe(version);
    const shown = parsed<{ actions: InstanceActions }>(
      await cli(['show', 'r-2', '--store', url, '--definitions', p.module, '--json']),
    );
    expect(shown.actions.cancel).toMatchObject({ possible: false, code: 'CANCELLING' });
  });

  it('run takes the module too: the input schema is enforced (exit 5)', async () => {
    const bad = await cli(['run', p.module, '--handlers', p.handlers, '--input', '{"order":5}']);
    expect(bad.code).toBe(EXIT.invalid);
    expect(bad.stderr).toMatch(/^error INVALID_INPUT: /);
    const good = await cli(['run', p.module, '--handlers', p.handlers, '--input', '{"order":"B"}']);
    expect(good.code).toBe(RUN_EXIT.waiting); // waits for the human decision run cannot send
  });

  it('refuses a TypeScript module and a module without definitions (exit 2)', async () => {
    const tsDefs = await cli(['cancel', 'r-1', '--store', url, '--definitions', join(p.dir, 'refund.ts')]);
    expect(tsDefs.code).toBe(EXIT.usage);
    expect(tsDefs.stderr).toMatch(
      /^error USAGE: .*definitions in TypeScript are not supported; compile the module/,
    );
    const empty = await cli(['cancel', 'r-1', '--store', url, '--definitions', join(p.dir, 'empty.mjs')]);
    expect(empty.code).toBe(EXIT.usage);
    expect(empty.stderr).toContain('exports no workflow definitions');
  });

  it('refuses a workflow built by another copy of the engine, whose schemas it cannot see (exit 2)', async () => {
    // A module resolving its own @stepfold/engine (a global CLI beside a project's engine).
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-copy-'));
    const engine = join(dir, 'node_modules/@stepfold/engine');
    mkdirSync(engine, { recursive: true });
    cpSync(join(ROOT, 'packages/engine/dist'), join(engine, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'packages/engine/package.json'), join(engine, 'package.json'));
    symlinkSync(
      realpathSync(join(ROOT, 'packages/engine/node_modules/zod')),
      join(dir, 'node_modules/zod'),
      'dir',
    );
    writeFileSync(join(dir, 'refund.mjs'), REFUND_MODULE);
    const r = await cli([
      'signal',
      'r-1',
      'note',
      '--payload',
      '{"reason":5}',
      '--store',
      url,
      '--definitions',
      join(dir, 'refund.mjs'),
    ]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/refund v1 was built by another copy of @stepfold\/engine than the CLI's/);
  });
});
