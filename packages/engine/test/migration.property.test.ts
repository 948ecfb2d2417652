import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  isStepfoldError,
  isTerminal,
  type Snapshot,
  type WorkflowDefinition,
  type WorkflowHarness,
} from '@stepfold/engine';
import {
  checkMigration,
  defineMigration,
  type MigrationRefusedError,
  migrate,
  planMigration,
} from '@stepfold/engine/migrations';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Random pairs of versions: v1 is a chain of tasks, human and wait steps, sleeps and parallels (a
// task and a wait branch); v2 renames, removes, adds, or changes the kind (a parallel: swaps its
// branches), handler, signal or timeout of its steps. Random v1 instances are driven to random
// points and stored; then each is migrated. Every instance that moves must finish on v2 when
// driven to its end; every one refused must be stored exactly as before, for reasons the static
// check listed. STEPFOLD_MIGRATIONS sets the run count (default small enough for `pnpm test`).

const RUNS = Number(process.env['STEPFOLD_MIGRATIONS'] ?? 60);
const SEED = Number(process.env['STEPFOLD_MIGRATIONS_SEED'] ?? 22_2022);

/** The kinds a step may change into; v1 also has `fork`, a parallel of a task and a wait branch. */
const KINDS = ['task', 'human', 'wait', 'sleep'] as const;
type Kind = (typeof KINDS)[number] | 'fork';
interface StepSpec {
  kind: Kind;
  compensate: boolean;
  timeout: boolean;
  retry: boolean;
}
type Op = 'keep' | 'rename' | 'remove' | 'kind' | 'handler' | 'signal' | 'timeout';
const OPS: Op[] = ['keep', 'keep', 'keep', 'rename', 'remove', 'kind', 'handler', 'signal', 'timeout'];
type Action = 'complete' | 'fail' | 'signal' | 'wake' | 'cancel';

type Steps = Array<[string, object]>;

/**
 * One step's JSON and, for a fork, its branch steps (ids from `base`, never renamed); `base` names
 * its handlers and signal too, so a renamed step keeps them. A fork's `kind` change swaps its branches.
 */
function stepJson(
  base: string,
  s: StepSpec,
  changed: { handler?: boolean; signal?: boolean; kind?: boolean },
): { json: object; branches: Steps } {
  if (s.kind === 'fork') {
    const ids = [`${base}_a`, `${base}_b`];
    return {
      json: { kind: 'parallel', branches: changed.kind ? [...ids].reverse() : ids },
      branches: [
        [ids[0]!, { kind: 'task', handler: `h_${base}_a${changed.handler ? 'b' : ''}` }],
        [ids[1]!, { kind: 'wait', signal: `sig_${base}_b${changed.signal ? 'b' : ''}` }],
      ],
    };
  }
  const kind = changed.kind ? KINDS[(KINDS.indexOf(s.kind) + 1) % KINDS.length]! : s.kind;
  return { json: simpleStep(base, { ...s, kind }, changed), branches: [] };
}

function simpleStep(
  base: string,
  s: StepSpec & { kind: (typeof KINDS)[number] },
  changed: { handler?: boolean; signal?: boolean },
) {
  const timeout = s.timeout ? { timeoutMs: 1_000 } : {};
  const signal = `sig_${base}${changed.signal ? 'b' : ''}`;
  switch (s.kind) {
    case 'task':
      return {
        kind: 'task',
        handler: `h_${base}${changed.handler ? 'b' : ''}`,
        ...(s.compensate ? { compensate: `c_${base}` } : {}),
        ...(s.retry ? { retry: { maxAttempts: 2, initialMs: 100 } } : { retry: { maxAttempts: 1 } }),
      };
    case 'human':
      return { kind: 'human', signal, ...timeout };
    case 'wait':
      return { kind: 'wait', signal, ...timeout };
    case 'sleep':
      return { kind: 'sleep', ms: 500 };
  }
}

/** A chain of steps in order, each going on to the next, and the branch steps of its forks. */
function chain(name: string, version: number, steps: Steps, branches: Steps): WorkflowDefinition {
  const out: Record<string, object> = Object.fromEntries(branches);
  steps.forEach(([id, s], i) => {
    const next = steps[i + 1];
    out[id] = next ? { ...s, next: next[0] } : s;
  });
  return defineWorkflow({ name, version, start: steps[0]![0], steps: out } as never);
}

const specArb = fc.record({
  kind: fc.constantFrom<Kind>(...KINDS, 'fork'),
  compensate: fc.boolean(),
  timeout: fc.boolean(),
  retry: fc.boolean(),
});

const caseArb = fc.record({
  v1: fc.array(specArb, { minLength: 2, maxLength: 5 }),
  ops: fc.array(fc.constantFrom(...OPS), { minLength: 5, maxLength: 5 }),
  added: fc.array(fc.nat(5), { maxLength: 2 }),
  recipe: fc.boolean(),
  instances: fc.array(
    fc.array(
      fc.record({
        what: fc.constantFrom<Action>('complete', 'complete', 'signal', 'wake', 'fail', 'cancel'),
        retryable: fc.boolean(),
      }),
      { maxLength: 8 },
    ),
    { minLength: 1, maxLength: 4 },
  ),
});

/** Reports on the first task in flight (by key) as a runner would: its attempt and key. */
function report(h: WorkflowHarness, ok: boolean, retryable: boolean): boolean {
  const keys = Object.keys(h.snapshot.tasks).sort();
  const t = keys.map((k) => h.snapshot.tasks[k]!).find((x) => !x.detached);
  if (!t) return false;
  const at = { step: t.step, attempt: t.attempt, phase: t.phase, key: t.idempotencyKey };
  return ok
    ? h.send({ type: 'task.completed', ...at, output: t.phase === 'run' ? { by: t.step } : undefined })
    : h.send({ type: 'task.failed', ...at, error: { message: 'boom', retryable } });
}

function signalFirst(h: WorkflowHarness): boolean {
  const w = h.awaitingSignal()[0];
  return w ? h.send({ type: 'signal', name: w.signal, payload: { decision: 'approve' } }) : false;
}

/** Drives an instance to its end: reports every task done, answers every wait, jumps to every timer, requeues. */
function finish(h: WorkflowHarness): void {
  for (let i = 0; i < 200 && !isTerminal(h.status); i++) {
    if (h.status === 'dlq' && h.requeue()) continue;
    if (report(h, true, false) || signalFirst(h)) continue;
    if (!h.advanceToWake()) break;
  }
}

describe('migrations (property): what moves finishes on v2, what is refused is untouched', () => {
  it('holds for random version pairs and instances', async () => {
    const seen = { moved: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const ids = c.v1.map((_, i) => `s${i}`);
        const v1Steps: Steps = [];
        const v1Branches: Steps = [];
        c.v1.forEach((s, i) => {
          const { json, branches } = stepJson(ids[i]!, s, {});
          v1Steps.push([ids[i]!, json]);
          v1Branches.push(...branches);
        });
        const v1 = chain('prop', 1, v1Steps, v1Branches);
        const mapped: Record<string, string | null> = {};
        const v2Steps: Steps = [];
        const v2Branches: Steps = [];
        c.v1.forEach((s, i) => {
          const id = ids[i]!;
          const op = c.ops[i]!;
          if (op === 'remove') {
            mapped[id] = null;
            if (s.kind === 'fork') for (const b of ['a', 'b']) mapped[`${id}_${b}`] = null;
            return;
          }
          const next = op === 'rename' ? `r${i}` : id;
          if (op === 'rename') mapped[id] = next;
          const spec = { ...s, timeout: op === 'timeout' ? !s.timeout : s.timeout };
          const changed = { handler: op === 'handler', signal: op === 'signal', kind: op === 'kind' };
          const { json, branches } = stepJson(id, spec, changed);
          v2Steps.push([next, json]);
          v2Branches.push(...branches);
        });
        c.added.forEach((at, j) => {
          v2Steps.splice(Math.min(at, v2Steps.length), 0, [`n${j}`, { kind: 'task', handler: `h_n${j}` }]);
        });
        if (v2Steps.length === 0) v2Steps.push(['n9', { kind: 'succeed' }]);
        const v2 = chain('prop', 2, v2Steps, v2Branches);
        const m = defineMigration({
          from: v1,
          to: v2,
          steps: mapped,
          ...(c.recipe
            ? {
                data: (draft: { input: Record<string, unknown> }) => {
                  draft.input.extra = 1;
                },
              }
            : {}),
        });
        const check = checkMigration(m);

        const store = createMemoryStore();
        let now = 0;
        const runner = createRunner({ store, workflows: [v1, v2], execute: false, clock: () => now });
        for (const [n, actions] of c.instances.entries()) {
          const h = createHarness(v1, { id: `i${n}` }).start({ n });
          for (const a of actions) {
            if (isTerminal(h.status)) break;
            if (a.what === 'complete' || a.what === 'fail') report(h, a.what === 'complete', a.retryable);
            else if (a.what === 'signal') signalFirst(h);
            else if (a.what === 'wake') h.advanceToWake();
            else h.cancel('property');
          }
          await store.create(h.snapshot);
          now = h.now;
          const before = JSON.stringify(await store.load(h.id));
          const plan = planMigration(m, h.snapshot, { at: now });
          const moved = await migrate(runner, m, h.id).catch((e: unknown) => e);
          if (isStepfoldError(moved, 'MIGRATION_REFUSED')) {
            const { reasons } = moved as MigrationRefusedError;
            expect(plan.ok).toBe(false);
            expect(JSON.stringify(await store.load(h.id))).toBe(before);
            const known = new Set([...check.reasons, `instance has finished (${h.status})`]);
            for (const r of reasons) expect(known, `reason not in the static check: ${r}`).toContain(r);
            seen.refused++;
            continue;
          }
          if (moved instanceof Error) throw moved;
          expect(plan.ok).toBe(true);
          const s = moved as Snapshot;
          expect(s.workflow.version).toBe(2);
          if (c.recipe) expect(s.input).toEqual({ n, extra: 1 });
          const h2 = createHarness(v2, { from: s });
          finish(h2);
          expect(isTerminal(h2.status), `${h.id} did not finish on v2 (${h2.status})`).toBe(true);
          expect(h2.snapshot.workflow.version).toBe(2);
          seen.moved++;
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
    // Both sides of the property were exercised, not one.
    expect(seen.moved).toBeGreaterThan(RUNS / 4);
    expect(seen.refused).toBeGreaterThan(RUNS / 4);
  });
});
