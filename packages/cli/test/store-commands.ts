import { createRunner, type Snapshot, type Store } from '@stepfold/engine';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { childOf, parentMidway } from '../../engine/test/child-fixtures.js';
import type { ChildPage } from '../src/child-listing.js';
import { EXIT } from '../src/exit-codes.js';
import type { Family } from '../src/family.js';
import type { InstanceRow } from '../src/snapshot-view.js';
import { cli, EXAMPLES, exampleHandlers, expenseDefinition, parsed } from './cli.js';

/** A fresh, isolated store on a real server, the URL the CLI opens it with, and how to remove it. */
export interface StoreUnderTest {
  url: string;
  store: Store;
  destroy(): Promise<void>;
}

/** Instances the suite creates with the engine's runner, by what happens to them in the tests. */
const IDS = {
  approve: 'exp-1',
  reject: 'exp-2',
  cancel: 'exp-3',
  signal: 'exp-4',
  dlq: 'exp-5',
  abort: 'exp-6',
};

/** Creates the instances: six expense claims waiting at the manager (one approved into dlq), one other. */
export async function seed(store: Store): Promise<void> {
  const runner = createRunner({
    store,
    workflows: [expenseDefinition()],
    handlers: await exampleHandlers(EXAMPLES.expenseHandlers),
  });
  for (const id of Object.values(IDS)) {
    await runner.start('expense', id, { amount: id === IDS.dlq ? 5000 : 40 });
  }
  await runner.signal(IDS.dlq, 'manager', { decision: 'approve' }); // pay refuses 5000: dlq
  await runner.start('expense', 'misc-1', { amount: 1 });
}

/**
 * The store commands against one adapter: list (filters, paging), show, approve, reject, cancel,
 * abort, signal, requeue, diagram, and the exit codes of a missing id and a bad signal.
 */
export function storeCommandSuite(open: () => Promise<StoreUnderTest>): void {
  let t: StoreUnderTest;
  const acting = () => ['--store', t.url, '--definitions', EXAMPLES.dir, '--json'];
  const load = async (id: string): Promise<Snapshot> => (await t.store.load(id))!;

  beforeAll(async () => {
    t = await open();
    await seed(t.store);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  it('lists with filters and pages with the cursor', async () => {
    const all = parsed<{ items: InstanceRow[]; cursor: string | null }>(
      await cli(['list', '--store', t.url, '--json']),
    );
    expect(all.items.map((i) => i.id)).toEqual([...Object.values(IDS), 'misc-1'].sort());
    expect(all.cursor).toBeNull();
    expect(all.items.find((i) => i.id === IDS.approve)).toMatchObject({
      workflow: 'expense',
      workflowVersion: 1,
      status: 'waiting',
      active: ['manager'],
    });

    const dlq = parsed<{ items: InstanceRow[] }>(
      await cli(['list', '--store', t.url, '--status', 'dlq', '--json']),
    );
    expect(dlq.items.map((i) => i.id)).toEqual([IDS.dlq]);
    const none = parsed<{ items: InstanceRow[] }>(
      await cli(['list', '--store', t.url, '--workflow', 'order-saga', '--json']),
    );
    expect(none.items).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const args = ['list', '--store', t.url, '--prefix', 'exp-', '--limit', '4', '--json'];
      const page: { items: InstanceRow[]; cursor: string | null } = parsed(
        await cli(cursor ? [...args, '--cursor', cursor] : args),
      );
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(Object.values(IDS).sort());
    expect(pages).toBeGreaterThanOrEqual(2);

    const table = await cli(['list', '--store', t.url, '--status', 'waiting', '--limit', '2']);
    expect(table.code).toBe(EXIT.ok);
    expect(table.stdout).toMatch(/^ID\s+WORKFLOW\s+STATUS/);
    expect(table.stdout).toContain('next page: --cursor ');
  });

  it('shows an instance: status, steps, tasks, error and the transition log', async () => {
    const shown = parsed<Snapshot>(await cli(['show', IDS.dlq, '--store', t.url, '--json']));
    expect(shown.status).toBe('dlq');
    expect(shown.steps.pay?.status).toBe('dlq');
    expect(shown.error).toMatchObject({ code: 'LIMIT', step: 'pay' });
    expect(shown.log.map((e) => e.type)).toContain('step.dlq');
    const human = await cli([
      'show',
      IDS.approve,
      '--store',
      t.url,
      '--diagram',
      '--definitions',
      EXAMPLES.expense,
    ]);
    expect(human.code).toBe(EXIT.ok);
    expect(human.stdout).toMatch(/^exp-1\s+expense@1\s+waiting\s+v2/);
    expect(human.stdout).toMatch(/manager\s+active/);
    expect(human.stdout).toContain('flowchart');
  });

  it('approves a human step: the next task is queued for workers, one new version', async () => {
    const before = await load(IDS.approve);
    const r = await cli(['approve', IDS.approve, '--by', 'bob', ...acting()]);
    expect(r.code).toBe(EXIT.ok);
    const out = parsed<{
      previousVersion: number;
      version: number;
      status: string;
      queued: { step: string }[];
    }>(r);
    expect(out).toMatchObject({
      previousVersion: before.version,
      version: before.version + 1,
      status: 'running',
    });
    expect(out.queued.map((q) => q.step)).toEqual(['pay']);
    const after = await load(IDS.approve);
    expect(after.version).toBe(before.version + 1);
    expect(after.steps.manager).toMatchObject({
      status: 'completed',
      output: { decision: 'approve', by: 'bob' },
    });
    expect(after.tasks.pay?.queued).toBe(true);
  });

  it('rejects, cancels and aborts', async () => {
    const rejected = await cli(['reject', IDS.reject, '--reason', 'no receipt', ...acting()]);
    expect(rejected.code).toBe(EXIT.ok);
    expect((await load(IDS.reject)).steps.manager?.error?.code).toBe('REJECTED');

    const cancelled = await cli(['cancel', IDS.cancel, '--reason', 'duplicate', ...acting()]);
    expect(parsed(cancelled).status).toBe('cancelled');
    expect(await load(IDS.cancel)).toMatchObject({ status: 'cancelled', reason: 'duplicate', version: 3 });

    const aborted = await cli(['abort', IDS.abort, ...acting()]);
    expect(aborted.code).toBe(EXIT.ok);
    expect((await load(IDS.abort)).status).toBe('aborted');
  });

  it('signals: a signal nobody listens for yet waits in the inbox', async () => {
    const r = await cli(['signal', IDS.signal, 'receipt', '--payload', '{"file":"r.pdf"}', ...acting()]);
    expect(r.code).toBe(EXIT.ok);
    const after = await load(IDS.signal);
    expect(after.version).toBe(3);
    expect(after.inbox).toMatchObject([{ name: 'receipt', payload: { file: 'r.pdf' } }]);
    const shown = await cli(['show', IDS.signal, '--store', t.url]);
    expect(shown.stdout).toMatch(/inbox:\s*\n\s+receipt/);
  });

  it('sends: written to the inbox where the store has one, applied at once elsewhere', async () => {
    const before = await load(IDS.signal);
    const r = await cli(['send', IDS.signal, 'receipt', '--payload', '{"file":"s.pdf"}', ...acting()]);
    expect(r.code).toBe(EXIT.ok);
    const inbox = t.store.inbox !== undefined;
    expect(parsed(r)).toMatchObject({ changed: true, delivered: inbox ? 'inbox' : 'applied' });
    const after = await load(IDS.signal);
    if (inbox) {
      expect(after.version).toBe(before.version); // a worker applies it
      const [sent] = await t.store.inbox!.claim(Date.now(), 10, [IDS.signal]);
      expect(sent?.sent.map((s) => s.event.type === 'signal' && s.event.payload)).toEqual([
        { file: 's.pdf' },
      ]);
    } else {
      expect(after.version).toBe(before.version + 1);
      expect(after.inbox.map((m) => m.payload)).toContainEqual({ file: 's.pdf' });
    }
    const unknown = await cli(['send', IDS.signal, 'paymnet', ...acting()]);
    expect(unknown.code).toBe(EXIT.invalid);
  });

  it('exits 8 when nothing changed: finished, nothing parked, a signal id seen before', async () => {
    const cancelled = await cli(['cancel', IDS.cancel, ...acting()]);
    expect(cancelled.code).toBe(EXIT.unchanged);
    expect(cancelled.stderr).toBe('');
    expect(parsed(cancelled)).toMatchObject({
      changed: false,
      unchanged: `${IDS.cancel} has finished (cancelled)`,
    });
    expect((await cli(['abort', IDS.abort, ...acting()])).code).toBe(EXIT.unchanged);
    for (const args of [[IDS.abort], [IDS.abort, '--step', 'manager']]) {
      const approve = await cli(['approve', ...args, ...acting()]);
      expect(approve.code, args.join(' ')).toBe(EXIT.unchanged);
      expect(parsed(approve).unchanged).toContain(`${IDS.abort} has finished (aborted)`);
    }

    const requeue = await cli(['requeue', 'misc-1', '--store', t.url, '--definitions', EXAMPLES.dir]);
    expect(requeue.code).toBe(EXIT.unchanged);
    expect(requeue.stdout).toMatch(/^requeue: nothing changed \(nothing is parked in dlq, it is waiting\)/);

    const once = ['signal', 'misc-1', 'receipt', '--signal-id', 'r-1', ...acting()];
    expect((await cli(once)).code).toBe(EXIT.ok);
    const version = (await load('misc-1')).version;
    const twice = await cli(once);
    expect(twice.code).toBe(EXIT.unchanged);
    expect(parsed(twice).unchanged).toContain('was applied before');
    expect((await load('misc-1')).version).toBe(version);
  });

  it('requeues a dlq step with an input patch: the retry is queued for workers', async () => {
    const before = await load(IDS.dlq);
    const r = await cli(['requeue', IDS.dlq, '--patch', '{"amount":900}', ...acting()]);
    expect(r.code).toBe(EXIT.ok);
    const after = await load(IDS.dlq);
    expect(after.version).toBe(before.version + 1);
    expect(after.status).toBe('running');
    expect(after.input).toEqual({ amount: 900 });
    expect(after.tasks.pay).toMatchObject({ queued: true, attempt: 2 });
  });

  it('colours a diagram by a stored instance', async () => {
    const r = await cli(['diagram', EXAMPLES.expense, '--id', IDS.approve, '--store', t.url]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout.startsWith('flowchart')).toBe(true);
    expect(r.stdout).toMatch(/class \S+ done/);
  });

  it('exits by error kind: NOT_FOUND 3, UNKNOWN_SIGNAL 5 (invalid), no definitions 2', async () => {
    const missing = await cli(['show', 'nobody-here', '--store', t.url]);
    expect(missing.code).toBe(EXIT['not-found']);
    expect(missing.stderr).toBe('error NOT_FOUND: instance "nobody-here" not found\n');
    expect((await cli(['approve', 'nobody-here', ...acting()])).code).toBe(EXIT['not-found']);
    const unknown = await cli(['signal', 'misc-1', 'paymnet', ...acting()]);
    expect(unknown.code).toBe(EXIT.invalid);
    expect(parsed<{ error: { code: string } }>(unknown).error.code).toBe('UNKNOWN_SIGNAL');
    const noDefs = await cli(['cancel', 'misc-1', '--store', t.url]);
    expect(noDefs.code).toBe(EXIT.usage);
    expect((await load('misc-1')).status).toBe('waiting'); // nothing written
  });

  it('walks a parent and its children both ways: show, then children paged by id', async () => {
    // Hand-built in the shapes the child and map kinds write; created last, so `list` above is unmoved.
    const parent = parentMidway('fam-1');
    await t.store.create(parent);
    await t.store.create(childOf(parent, 'sub', 'completed'));
    for (const i of [0, 1, 2])
      await t.store.create(childOf(parent, 'lines', i === 1 ? 'failed' : 'completed', i));
    const shown = parsed<Family>(await cli(['show', 'fam-1', '--store', t.url, '--json']));
    expect(shown.children[0]).toMatchObject({ kind: 'child', id: 'fam-1/1/sub/1', childStatus: 'completed' });
    expect(shown.children[1]).toMatchObject({ kind: 'map', prefix: 'fam-1/1/lines/1/' });
    const child = parsed<Family>(await cli(['show', 'fam-1/1/lines/1/1', '--store', t.url, '--json']));
    expect(child.parent).toMatchObject({ id: 'fam-1', step: 'lines', item: 1, status: 'running' });
    const page = parsed<ChildPage>(
      await cli(['children', 'fam-1', '--step', 'lines', '--limit', '4', '--store', t.url, '--json']),
    );
    expect(page.items.map((r) => `${r.item} ${r.status}`)).toEqual([
      '0 completed',
      '1 failed',
      '2 completed',
      '3 missing',
    ]);
    expect(page.cursor).toBe('4');
  });
}
