import {
  defineWorkflow,
  flowControl,
  type Snapshot,
  type WorkflowDefinition,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { documentEntity } from './entity-fixtures.js';
import { approvalWorkflow, orderWorkflow } from './fixtures.js';
import { lockstep } from './plain-path-lockstep.js';
import { blockArb, compile, intentArb, type Task, toEvent } from './saga-gen.js';

// `step` runs the common events on a plain copy of the snapshot; `referenceStep` runs every event
// on a deep copy. Over random workflows and events both must agree (see `lockstep`).

describe('plain path = deep-copy reference (random saga workflows)', () => {
  it('same JSON, no-ops and errors for every event', () => {
    const caseArb = fc.record({
      body: blockArb(0, 4),
      onFailure: fc.constantFrom('compensate' as const, 'dlq' as const, 'fail' as const),
      flagSeed: fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }),
      intents: fc.array(intentArb, { maxLength: 50 }),
    });
    fc.assert(
      fc.property(caseArb, ({ body, onFailure, flagSeed, intents }) => {
        const g = compile(body, onFailure, flagSeed);
        const seen: Task[] = [];
        let now = 1_000;
        const next = (s: Snapshot, k: number) => {
          const i = intents[k]!;
          if (i.kind === 'tick') now += i.advance;
          for (const t of Object.values(s.tasks)) {
            if (!seen.some((x) => x.step === t.step && x.phase === t.phase && x.attempt === t.attempt))
              seen.push({ step: t.step, phase: t.phase, attempt: t.attempt });
          }
          return toEvent(s, i, now, seen, g.signals);
        };
        lockstep(
          g.definition,
          { type: 'start', at: now, id: 'p', input: { flags: g.flags } },
          next,
          intents.length,
        );
      }),
      { numRuns: 300 },
    );
  });
});

// Task steps in a chain: the results a task step's `next` takes straight into the next snapshot
// (handoff or not, with or without the idempotency key, stale, early or repeated), beside
// failures, retries, ticks and releases that take the general path.
describe('plain path = deep-copy reference (task chains)', () => {
  it('same JSON, no-ops and errors for every event', () => {
    const chainArb = fc.record({
      length: fc.integer({ min: 1, max: 5 }),
      timeouts: fc.array(fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined }), {
        minLength: 5,
        maxLength: 5,
      }),
      defaultTimeout: fc.option(fc.integer({ min: 1, max: 5_000 }), { nil: undefined }),
      log: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }),
      // Limited steps take the straight path too, their needs resolved as the general path's
      // dispatch resolves them; a key from the step before's output, which a result may lack
      // (INVALID_FLOW_KEY), sends the event to the general path.
      limited: fc.array(fc.constantFrom('no', 'input', 'output'), { minLength: 5, maxLength: 5 }),
      // The attempts' lease: the straight path sets and counts it as the general path does.
      leaseMs: fc.option(fc.integer({ min: 1, max: 8_000 }), { nil: undefined }),
      // An instance limit: the instance waits for its admission, then holds it to its end.
      admission: fc.boolean(),
    });
    const chainIntent = fc.record({
      kind: fc.constantFrom(
        'complete',
        'complete',
        'complete',
        'fail',
        'tick',
        'release',
        'heartbeat',
        'throttle',
        'admit',
      ),
      pick: fc.nat(),
      attemptOffset: fc.constantFrom(0, 0, 0, -1, 1),
      key: fc.constantFrom('none', 'none', 'right', 'wrong'),
      handoff: fc.boolean(),
      output: fc.option(fc.record({ n: fc.nat(3) }), { nil: undefined }),
      advance: fc.nat(6_000),
    });
    fc.assert(
      fc.property(chainArb, fc.array(chainIntent, { maxLength: 40 }), (c, intents) => {
        const ids = Array.from({ length: c.length }, (_, i) => `t${i}`);
        const def = defineWorkflow({
          name: 'chain',
          version: 1,
          start: 't0',
          ...(c.defaultTimeout === undefined ? {} : { defaults: { timeoutMs: c.defaultTimeout } }),
          ...(c.log === undefined ? {} : { limits: { log: c.log } }),
          ...(c.admission ? { concurrency: { key: 'input.n', limit: 1 } } : {}),
          steps: Object.fromEntries(
            ids.map((id, i) => [
              id,
              {
                kind: 'task',
                handler: `h${i}`,
                retry: { maxAttempts: 2, initialMs: 10, jitter: 0 },
                ...(c.timeouts[i] === undefined ? {} : { timeoutMs: c.timeouts[i] }),
                ...(c.limited[i] === 'no'
                  ? {}
                  : {
                      concurrency: {
                        key: c.limited[i] === 'output' && i > 0 ? `outputs.t${i - 1}.n` : 'input.n',
                        limit: 1,
                      },
                    }),
                ...(i + 1 < ids.length ? { next: ids[i + 1] } : {}),
              },
            ]),
          ),
        });
        let now = 1_000;
        const next = (s: Snapshot, k: number): WorkflowEvent | null => {
          const i = intents[k]!;
          const handoff = i.handoff ? { handoff: true } : {};
          if (i.kind === 'admit') return { type: 'instance.admitted', at: now };
          if (i.kind === 'tick') {
            now += i.advance;
            return { type: 'tick', at: now, ...handoff };
          }
          const t = Object.values(s.tasks)[i.pick % Math.max(1, Object.keys(s.tasks).length)];
          const stepId = t?.step ?? ids[i.pick % ids.length]!;
          const attempt = Math.max(1, (t?.attempt ?? 1) + i.attemptOffset);
          const key = i.key === 'none' ? {} : { key: i.key === 'right' && t ? t.idempotencyKey : 'p/1/t0/9' };
          const base = { at: now, step: stepId, attempt, ...key, ...handoff };
          if (i.kind === 'release') return { type: 'task.released', ...base };
          if (i.kind === 'heartbeat') return { type: 'task.heartbeat', ...base };
          if (i.kind === 'throttle') {
            const need = { scope: `chain/${stepId}`, key: '1', limit: 1 };
            return { type: 'task.throttled', ...base, need, until: now + i.advance };
          }
          if (i.kind === 'fail')
            return { type: 'task.failed', ...base, error: { message: 'x', retryable: true } };
          return { type: 'task.completed', ...base, ...(i.output ? { output: i.output } : {}) };
        };
        lockstep(def, { type: 'start', at: now, id: 'p', input: { n: 1 } }, next, intents.length, {
          kinds: [flowControl],
          ...(c.leaseMs === undefined ? {} : { leaseMs: c.leaseMs }),
        });
      }),
      { numRuns: 300 },
    );
  });
});

/** At least one bound, as the builder asks. */
type CollectBounds = { maxItems: number; idleMs?: number } | { idleMs: number; maxWaitMs?: number };

/** collect → process the batch → loop back. */
function batcher(fields: CollectBounds & { dedupeBy?: string }) {
  return workflow('batcher', 1, { limits: { inbox: 6, log: 12, signalIds: 5 } })
    .collect('gather', { signal: 'event', ...fields })
    .task('process', { handler: 'process', input: 'outputs.gather', next: 'gather' })
    .build();
}

const humanFlow = workflow('review', 1)
  .task('draft', { handler: 'draft', retry: { maxAttempts: 2 } })
  .human('review', { timeoutMs: 5_000 })
  .task('publish', { handler: 'publish', compensate: 'unpublish' })
  .build();

type Intent =
  | { kind: 'complete' | 'fail'; pick: number; retryable: boolean }
  | { kind: 'tick'; advance: number }
  | { kind: 'signal'; name: number; id: number; doc: number; decision: number }
  | { kind: 'cancel' | 'abort' | 'requeue' };

const simpleIntent: fc.Arbitrary<Intent> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete' as const, 'complete' as const, 'fail' as const),
      pick: fc.nat(),
      retryable: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), advance: fc.nat(12_000) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('signal' as const),
      name: fc.nat(4),
      id: fc.nat(12),
      doc: fc.nat(3),
      decision: fc.nat(3),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('cancel' as const, 'abort' as const, 'requeue' as const) }),
  },
);

const signalNames = ['event', 'review', 'approved', 'stray'];
const fixed: Array<[string, WorkflowDefinition]> = [
  ['order', orderWorkflow],
  ['approval', approvalWorkflow],
  ['human', humanFlow],
  ['entity', documentEntity({ batchesPerRun: 2, maxItems: 3, inbox: 4, log: 10 })],
  ['batcher idle', batcher({ maxItems: 4, idleMs: 1_000 })],
  ['batcher maxWait dedupe', batcher({ idleMs: 2_000, maxWaitMs: 5_000, dedupeBy: 'payload.doc' })],
];

for (const [name, def] of fixed) {
  describe(`plain path = deep-copy reference (${name})`, () => {
    it('same JSON, no-ops and errors for every event', () => {
      fc.assert(
        fc.property(fc.array(simpleIntent, { maxLength: 60 }), (intents) => {
          let now = 1_000;
          const next = (s: Snapshot, k: number): WorkflowEvent | null => {
            const i = intents[k]!;
            switch (i.kind) {
              case 'complete':
              case 'fail': {
                const tasks = Object.values(s.tasks);
                const t = tasks[i.pick % Math.max(1, tasks.length)];
                if (!t) return null;
                const base = { at: now, step: t.step, attempt: t.attempt, phase: t.phase };
                return i.kind === 'complete'
                  ? { type: 'task.completed', ...base, output: { n: i.pick % 5 } }
                  : { type: 'task.failed', ...base, error: { message: 'x', retryable: i.retryable } };
              }
              case 'tick':
                now += i.advance;
                return { type: 'tick', at: now };
              case 'signal': {
                now += 1;
                const decision = ['approve', 'reject', undefined][i.decision % 3];
                const payload = { doc: i.doc, ...(decision ? { decision } : {}) };
                const id = i.id === 0 ? undefined : `sig-${i.id}`;
                return { type: 'signal', at: now, name: signalNames[i.name % 4]!, payload, id };
              }
              default:
                return { type: i.kind, at: now };
            }
          };
          lockstep(def, { type: 'start', at: now, id: 'x', input: { doc: 'd' } }, next, intents.length);
        }),
        { numRuns: 200 },
      );
    });
  });
}
