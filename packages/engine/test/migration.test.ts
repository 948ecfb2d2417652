import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  isStepfoldError,
  type Snapshot,
  type StepfoldError,
  type,
  type ValidationError,
  VersionConflictError,
  workflow,
} from '@stepfold/engine';
import { checkMigration, defineMigration, migrate, planMigration } from '@stepfold/engine/migrations';
import { describe, expect, it } from 'vitest';

const v1 = workflow('pay', 1)
  .task('charge', { handler: 'charge', compensate: 'refund' })
  .wait('confirm', { signal: 'confirmed', timeoutMs: 1_000 })
  .task('receipt', { handler: 'receipt' })
  .build();

const v2 = workflow('pay', 2)
  .task('bill', { handler: 'charge', compensate: 'refund' })
  .wait('confirm', { signal: 'confirmed' })
  .task('receipt', { handler: 'receipt2' })
  .build();

const v1t = workflow('typed', 1).input(type<{ sku: string }>()).human('ok').build();
const v2t = workflow('typed', 2).input(type<{ sku: string; currency: string }>()).human('ok').build();

const caught = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e as StepfoldError;
  }
  throw new Error('did not throw');
};

describe('defineMigration', () => {
  it('lists every definition-level problem at once (INVALID_MIGRATION)', () => {
    const other = workflow('other', 1).task('x', { handler: 'x' }).build();
    const e = caught(() =>
      defineMigration({
        from: v2 as never,
        to: other as never,
        steps: { nope: 'x', bill: 'missing', confirm: 'x', receipt: 'x' } as never,
      }),
    ) as ValidationError;
    expect(e.code).toBe('INVALID_MIGRATION');
    const messages = e.issues.map((i) => i.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        'migrates pay to another workflow, other',
        'v1 is not above v2',
        '"nope" is not a step of pay v2',
        '"missing" is not a step of other v1',
        '"confirm" and "receipt" all map onto "x" (map or remove the others)',
      ]),
    );
  });

  it('types the step map by the definitions', () => {
    // Checked by the compiler (`node scripts/typecheck-tests.mjs`), never run.
    const typeOnly = () => {
      // @ts-expect-error a typo in an old step id fails to compile
      defineMigration({ from: v1, to: v2, steps: { chrage: 'bill' } });
      // @ts-expect-error and one in a new step id
      defineMigration({ from: v1, to: v2, steps: { charge: 'bil' } });
    };
    const typedInput = () =>
      defineMigration({
        from: v1t,
        to: v2t,
        data(draft) {
          draft.input.currency ??= 'EUR'; // a field of the new input, optional on the draft
          // @ts-expect-error the old input's fields keep their types
          draft.input.sku = 1;
        },
      });
    expect(typeof typeOnly).toBe('function');
    expect(typeof typedInput).toBe('function');
    expect(defineMigration({ from: v1, to: v2, steps: { charge: 'bill' } }).steps).toEqual({
      charge: 'bill',
      confirm: 'confirm',
      receipt: 'receipt',
    });
  });
});

describe('checkMigration and planMigration', () => {
  const m = defineMigration({ from: v1, to: v2, steps: { charge: 'bill' } });

  it('reports per step and state what would be refused', () => {
    const r = checkMigration(m);
    const by = Object.fromEntries(r.steps.map((s) => [s.step, s]));
    expect(by.charge?.inFlight).toEqual([
      'task in flight in step "charge"; migrate once it has reported',
      'compensation in flight in step "charge"; migrate once it has reported',
    ]);
    expect(by.charge?.active).toEqual([]);
    expect(by.confirm?.timers).toEqual(['timeout timer in step "confirm", v2\'s "confirm" has no timeout']);
    expect(by.receipt?.inFlight).toEqual([
      'task in flight in step "receipt" runs receipt, v2 runs receipt2 there',
    ]);
    expect(r.notes).toContain('step "charge" is "bill" in v2');
    expect(r.ok).toBe(false);
  });

  it('refuses what the instance holds and moves it once that is gone', () => {
    const h = createHarness(v1, { id: 'p-1' }).start({});
    expect(planMigration(m, h.snapshot, { at: 0 })).toEqual({
      ok: false,
      reasons: ['task in flight in step "charge"; migrate once it has reported'],
    });
    h.complete('charge', { id: 'C' });
    expect(planMigration(m, h.snapshot, { at: 0 })).toEqual({
      ok: false,
      reasons: ['timeout timer in step "confirm", v2\'s "confirm" has no timeout'],
    });
    const lenient = defineMigration({
      from: v1,
      to: workflow('pay', 2)
        .task('bill', { handler: 'charge', compensate: 'refund' })
        .wait('confirm', { signal: 'confirmed', timeoutMs: 5_000 })
        .task('receipt', { handler: 'receipt2' })
        .build(),
      steps: { charge: 'bill' },
    });
    const plan = planMigration(lenient, h.snapshot, { at: 7 });
    if (!plan.ok) throw new Error(plan.reasons.join());
    expect(plan.snapshot.steps.bill?.output).toEqual({ id: 'C' });
    expect(plan.snapshot.completed).toEqual(['bill']);
    expect(plan.snapshot.version).toBe(h.snapshot.version + 1);
    expect(plan.snapshot.updatedAt).toBe(7);
  });

  it('an instance in a parallel branch moves only into the same branch of as many', () => {
    const fork = (version: number, branches: string[]) =>
      defineWorkflow({
        name: 'fork',
        version,
        start: 'fork',
        steps: {
          fork: { kind: 'parallel', branches, next: 'after' },
          a: { kind: 'wait', signal: 'sa' },
          b: { kind: 'wait', signal: 'sb' },
          ...(branches.includes('c') ? { c: { kind: 'wait', signal: 'sc' } as const } : {}),
          after: { kind: 'succeed' },
        },
      });
    const v1f = fork(1, ['a', 'b']);
    const h = createHarness(v1f, { id: 'f-1' }).start({});
    expect([...h.snapshot.active].sort()).toEqual(['a', 'b', 'fork']);
    const plan = (to: ReturnType<typeof fork>) =>
      planMigration(defineMigration({ from: v1f, to }), h.snapshot, { at: 1 });
    expect(plan(fork(2, ['b', 'a']))).toEqual({
      ok: false,
      reasons: [
        'step "a" (active) sits in another parallel branch in v2',
        'step "b" (active) sits in another parallel branch in v2',
      ],
    });
    expect(plan(fork(2, ['a', 'b', 'c']))).toEqual({
      ok: false,
      reasons: ['parallel step "fork" has 2 branches, v2\'s "fork" 3'],
    });
    const same = plan(fork(3, ['a', 'b']));
    expect(same.ok && same.snapshot.workflow.version).toBe(3);
  });

  it('buffered signals v2 does not take, and outputs for steps not run, are reasons', () => {
    const h1 = workflow('buf', 1).wait('first', { signal: 'go' }).wait('second', { signal: 'more' }).build();
    const h2 = workflow('buf', 2).wait('first', { signal: 'go' }).wait('second', { signal: 'extra' }).build();
    const m2 = defineMigration({ from: h1, to: h2 });
    expect(checkMigration(m2).signals).toEqual(['pending signal "more" is not accepted by v2']);
    const h = createHarness(h1, { id: 'b-1' }).start({});
    h.signal('more', { n: 1 }); // buffered: `second` is not active yet
    expect(planMigration(m2, h.snapshot, { at: 1 })).toEqual({
      ok: false,
      reasons: ['pending signal "more" is not accepted by v2'],
    });
    // The recipe may rename it; an output for a step that has not run is refused.
    const renamed = defineMigration({
      from: h1,
      to: h2,
      data(draft) {
        for (const r of draft.signals) if (r.name === 'more') r.name = 'extra';
      },
    });
    const plan = planMigration(renamed, h.snapshot, { at: 1 });
    expect(plan.ok && plan.snapshot.inbox.map((r) => r.name)).toEqual(['extra']);
    const stray = defineMigration({
      from: h1,
      to: h2,
      data(draft) {
        draft.outputs.second = { made: 'up' };
        for (const r of draft.signals) r.name = 'extra';
      },
    });
    expect(planMigration(stray, h.snapshot, { at: 1 })).toEqual({
      ok: false,
      reasons: ['data recipe set an output for "second", a step the instance has not run'],
    });
  });

  it('a recipe that throws is a reason, not a crash', () => {
    const h = createHarness(v1, { id: 'p-2' }).start({});
    h.complete('charge', null);
    const bad = defineMigration({
      from: v1,
      to: workflow('pay', 3)
        .task('bill', { handler: 'charge', compensate: 'refund' })
        .wait('confirm', { signal: 'confirmed', timeoutMs: 1 })
        .build(),
      steps: { charge: 'bill', receipt: null },
      data() {
        throw new Error('no currency table');
      },
    });
    expect(planMigration(bad, h.snapshot, { at: 0 })).toEqual({
      ok: false,
      reasons: ['data recipe threw: no currency table'],
    });
  });

  it('migrate reloads and plans again after losing a race, and writes once', async () => {
    const store = createMemoryStore();
    const saves: number[] = [];
    let raced = false;
    const racing = {
      ...store,
      async save(s: Snapshot, expected: number) {
        if (!raced) {
          raced = true;
          // Someone else writes first (a log-only change here): this save must lose.
          const stored = (await store.load(s.id))!;
          await store.save({ ...stored, version: stored.version + 1 }, stored.version);
          throw new VersionConflictError(s.id, expected, stored.version + 1);
        }
        saves.push(expected);
        return store.save(s, expected);
      },
    };
    const w1 = workflow('hold', 1).wait('go', { signal: 'go' }).build();
    const w2 = workflow('hold', 2).wait('proceed', { signal: 'go' }).build();
    const runner = createRunner({ store: racing, workflows: [w1, w2], execute: false });
    await runner.start('hold', 'r-1', {}, { version: 1 });
    const moved = await migrate(
      runner,
      defineMigration({ from: w1, to: w2, steps: { go: 'proceed' } }),
      'r-1',
    );
    // Planned again on the version the other writer left (2), written once as 3.
    expect(saves).toEqual([2]);
    expect(moved.version).toBe(3);
    expect(await store.load('r-1')).toEqual(moved);
  });

  it('migrate needs the runner to register the target, before reading anything', async () => {
    const store = createMemoryStore();
    let loads = 0;
    const counting = {
      ...store,
      load: (id: string) => {
        loads++;
        return store.load(id);
      },
    };
    const runner = createRunner({ store: counting, workflows: [v1], execute: false });
    // @ts-expect-error the compiler sees it too (migrations.types.test.ts); this is the run-time check
    const e = await migrate(runner, m, 'p-1').catch((x: unknown) => x);
    expect(isStepfoldError(e, 'UNKNOWN_VERSION')).toBe(true);
    expect(loads).toBe(0);
  });
});
