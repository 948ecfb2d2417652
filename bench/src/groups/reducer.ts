import { createRequire } from 'node:module';
import { type Snapshot, step, type WorkflowEvent } from '@stepfold/engine';
import { assign, createMachine, initialTransition, transition } from 'xstate';
import { compareSync } from '../measure.js';
import { type Group, rateRow } from '../row.js';
import { LINEAR_STEPS, linear10 } from '../workflows.js';

// One instance = 11 events: start, then one task.completed per step. Every contender gets the
// same event objects, built once, so event construction is not part of what is timed.
const XSTATE_VERSION = (createRequire(import.meta.url)('xstate/package.json') as { version: string }).version;
const EVENTS_PER_INSTANCE = 1 + LINEAR_STEPS.length;
const completions: WorkflowEvent[] = LINEAR_STEPS.map((id, k) => ({
  type: 'task.completed',
  at: 1_000 + k + 1,
  step: id,
  attempt: 1,
  output: { k },
}));
const starts: WorkflowEvent[] = Array.from({ length: 1024 }, (_, i) => ({
  type: 'start',
  at: 1_000,
  id: `order-${i}`,
  input: { orderId: i, amount: 42 },
}));

/** Our pure reducer. */
function ours(i: number): Snapshot {
  let s = step(linear10, null, starts[i & 1023]!);
  for (const e of completions) s = step(linear10, s, e);
  if (s.status !== 'completed') throw new Error(`expected completed, got ${s.status}`);
  return s;
}

/**
 * XState v5 equivalent: ten states, each records its dispatched task on entry and, on the
 * matching completion (guarded on step and attempt), stores the output and moves on.
 */
type Ctx = {
  input: unknown;
  version: number;
  outputs: Record<string, unknown>;
  task: { step: string; attempt: number } | null;
};
type Ev = { type: 'task.completed'; step: string; attempt: number; output: unknown; at: number };
const machine = createMachine({
  types: {} as { context: Ctx; events: Ev; input: unknown },
  id: 'bench-linear',
  initial: 's1',
  context: ({ input }) => ({ input, version: 1, outputs: {}, task: null }),
  states: {
    ...Object.fromEntries(
      LINEAR_STEPS.map((id, k) => [
        id,
        {
          entry: assign({ task: () => ({ step: id, attempt: 1 }) }),
          on: {
            'task.completed': {
              guard: ({ event }: { event: Ev }) => event.step === id && event.attempt === 1,
              target: LINEAR_STEPS[k + 1] ?? 'done',
              actions: assign(({ context, event }: { context: Ctx; event: Ev }) => ({
                version: context.version + 1,
                outputs: { ...context.outputs, [id]: event.output },
                task: null,
              })),
            },
          },
        },
      ]),
    ),
    done: { type: 'final' },
  },
});
const xEvents = completions as unknown as Ev[];
function xstate(i: number): unknown {
  let [s] = initialTransition(machine, (starts[i & 1023] as { input: unknown }).input);
  for (const e of xEvents) [s] = transition(machine, s, e);
  if (s.status !== 'done') throw new Error(`xstate: expected done, got ${s.status}`);
  return s;
}

/** Hand-written immutable reducer with the least bookkeeping: current step, attempt, outputs. */
interface Mini {
  id: string;
  version: number;
  status: 'running' | 'completed';
  input: unknown;
  current: string | null;
  attempt: number;
  outputs: Record<string, unknown>;
  updatedAt: number;
}
const nextOf: Record<string, string | null> = Object.fromEntries(
  LINEAR_STEPS.map((id, k) => [id, LINEAR_STEPS[k + 1] ?? null]),
);
function spreadStep(s: Mini | null, e: WorkflowEvent): Mini {
  if (e.type === 'start')
    return {
      id: e.id,
      version: 1,
      status: 'running',
      input: e.input,
      current: LINEAR_STEPS[0]!,
      attempt: 1,
      outputs: {},
      updatedAt: e.at,
    };
  if (!s) throw new Error('no instance');
  if (
    e.type !== 'task.completed' ||
    s.status !== 'running' ||
    e.step !== s.current ||
    e.attempt !== s.attempt
  )
    return s;
  const next = nextOf[e.step] ?? null;
  return {
    ...s,
    version: s.version + 1,
    status: next ? 'running' : 'completed',
    current: next,
    attempt: next ? 1 : 0,
    outputs: { ...s.outputs, [e.step]: e.output },
    updatedAt: e.at,
  };
}
function spread(i: number): Mini {
  let s = spreadStep(null, starts[i & 1023]!);
  for (const e of completions) s = spreadStep(s, e);
  if (s.status !== 'completed') throw new Error('spread: not completed');
  return s;
}

export const reducer: Group = {
  name: 'reducer',
  async run() {
    const opts = { warmupMs: 1500, sampleMs: 400, samples: 9 };
    const [a, x] = compareSync(ours, xstate, opts);
    const [a2, h] = compareSync(ours, spread, opts);
    const ev = (r: { hz: number }) => r.hz * EVENTS_PER_INSTANCE;
    const details = (r: { samples: number[]; batch: number }, b: { samples: number[]; batch: number }) => ({
      eventsPerInstance: EVENTS_PER_INSTANCE,
      oursInstancesPerSample: r.batch,
      baselineInstancesPerSample: b.batch,
      oursEventsPerSec: r.samples.map((v) => Math.round(v * EVENTS_PER_INSTANCE)),
      baselineEventsPerSec: b.samples.map((v) => Math.round(v * EVENTS_PER_INSTANCE)),
    });
    return [
      rateRow('reducer', ev(a), ev(x), 'events/s', 15, {
        note: `10-step linear task workflow, start + 10 task.completed per instance, rates per CPU-second; baseline: XState ${XSTATE_VERSION} pure transition() on an equivalent 10-state machine with assign() context updates`,
        details: details(a, x),
      }),
      rateRow('reducer-spread', ev(a2), ev(h), 'events/s', 0.6, {
        note: 'same events; baseline: hand-written object-spread reducer tracking only current step, attempt, outputs, version',
        details: details(a2, h),
      }),
    ];
  },
};
