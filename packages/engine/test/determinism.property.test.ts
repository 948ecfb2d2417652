import { type Snapshot, step, type WorkflowEvent } from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileWorkflow } from '../src/definition/compile.js';
import { approvalWorkflow, orderWorkflow } from './fixtures.js';

// A random "intent" becomes a concrete event only against the current snapshot, so sequences
// mix results for in-flight attempts with stale, duplicate and irrelevant events.
type Intent =
  | { kind: 'complete' | 'fail'; pick: number; stale: boolean; retryable: boolean }
  | { kind: 'tick'; advance: number }
  | { kind: 'signal'; name: 'approved' | 'other'; dup: number }
  | { kind: 'cancel' | 'abort' | 'requeue' };

const intent: fc.Arbitrary<Intent> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete' as const, 'fail' as const),
      pick: fc.nat(),
      stale: fc.boolean(),
      retryable: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      advance: fc.integer({ min: 0, max: 400_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('signal' as const),
      name: fc.constantFrom('approved' as const, 'other' as const),
      dup: fc.nat(3),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('cancel' as const, 'abort' as const, 'requeue' as const) }),
  },
);

function toEvent(s: Snapshot, i: Intent, now: number): WorkflowEvent | null {
  switch (i.kind) {
    case 'complete':
    case 'fail': {
      const tasks = Object.values(s.tasks);
      if (tasks.length === 0) return null;
      const t = tasks[i.pick % tasks.length]!;
      const attempt = i.stale && t.attempt > 1 ? t.attempt - 1 : t.attempt;
      return i.kind === 'complete'
        ? { type: 'task.completed', at: now, step: t.step, attempt, phase: t.phase, output: { n: i.pick } }
        : {
            type: 'task.failed',
            at: now,
            step: t.step,
            attempt,
            phase: t.phase,
            error: { message: 'x', retryable: i.retryable },
          };
    }
    case 'tick':
      return { type: 'tick', at: now };
    case 'signal':
      return { type: 'signal', at: now, name: i.name, payload: { dup: i.dup }, id: `sig-${i.dup}` };
    default:
      return { type: i.kind, at: now };
  }
}

for (const [name, def] of [
  ['order', orderWorkflow],
  ['approval', approvalWorkflow],
] as const) {
  describe(`determinism and replay (${name})`, () => {
    it('the same events give byte-identical JSON, and replay reproduces the live snapshot', () => {
      fc.assert(
        fc.property(fc.array(intent, { maxLength: 40 }), fc.jsonValue(), (intents, input) => {
          let now = 1_000;
          let s = step(def, null, { type: 'start', at: now, id: 'p-1', input });
          const accepted: WorkflowEvent[] = [{ type: 'start', at: now, id: 'p-1', input }];
          for (const i of intents) {
            if (i.kind === 'tick') now += i.advance;
            const e = toEvent(s, i, now);
            if (!e) continue;
            if (e.type === 'signal' && !compileWorkflow(def).signals.has(e.name)) {
              // No step of this definition listens for it: refused, or ignored when the instance has
              // ended or the signal id was seen; never written.
              let out: Snapshot | undefined;
              try {
                out = step(def, s, e);
              } catch (err) {
                expect(err).toMatchObject({ code: 'UNKNOWN_SIGNAL' });
              }
              if (out) expect(out).toBe(s);
              continue;
            }
            const next = step(def, s, e);
            // Determinism: applying the same event to the same snapshot again gives identical JSON.
            expect(JSON.stringify(step(def, s, e))).toBe(JSON.stringify(next));
            if (next !== s) {
              expect(next.version).toBe(s.version + 1);
              accepted.push(e);
            }
            s = next;
          }
          let r: Snapshot | null = null;
          for (const e of accepted) r = step(def, r, e);
          expect(JSON.stringify(r)).toBe(JSON.stringify(s));
        }),
        { numRuns: 300 },
      );
    });
  });
}
