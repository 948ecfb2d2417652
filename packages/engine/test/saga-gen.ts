import { defineWorkflow, type Snapshot, type StepDefinition, type WorkflowEvent } from '@stepfold/engine';
import fc from 'fast-check';

// Random workflows (sequences, choices, nested parallels, savepoints, waits) and random event
// intents for them, shared by the saga oracle test and the plain-path differential test.

export type Policy = 'compensate' | 'dlq' | 'fail';
export type Node =
  | {
      kind: 'task';
      comp: boolean;
      cof: boolean;
      pivot: boolean;
      onFailure?: Policy | undefined;
      attempts: number;
      timeout: number;
    }
  | { kind: 'savepoint' | 'fail' }
  | { kind: 'wait' | 'human'; timeout?: number | undefined }
  | { kind: 'sleep'; ms: number }
  | { kind: 'choice'; branches: Node[][] }
  | { kind: 'parallel'; branches: Node[][]; join: 'all' | 'any' | 'atLeast' };

const taskArb: fc.Arbitrary<Node> = fc.record({
  kind: fc.constant('task' as const),
  comp: fc.boolean(),
  cof: fc.boolean(),
  pivot: fc.constantFrom(false, false, false, false, false, false, false, true),
  onFailure: fc.constantFrom<Policy | undefined>(undefined, undefined, undefined, undefined, 'dlq', 'fail'),
  attempts: fc.integer({ min: 1, max: 3 }),
  timeout: fc.constantFrom(1000, 5000),
});
const leafArb: fc.Arbitrary<Node> = fc.oneof(
  { weight: 8, arbitrary: taskArb },
  { weight: 2, arbitrary: fc.constant({ kind: 'savepoint' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('wait' as const, 'human' as const),
      timeout: fc.constantFrom(undefined, 3000, 20_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sleep' as const), ms: fc.constantFrom(0, 500) }) },
);

/** A block of up to `len` nodes; parallels nest at most three levels deep. */
export function blockArb(depth: number, len: number, mayFail = true): fc.Arbitrary<Node[]> {
  const options: Array<fc.WeightedArbitrary<Node>> = [{ weight: 10, arbitrary: leafArb }];
  if (len > 1) {
    // Only the first branch of a choice may end in a fail step, so what follows stays reachable.
    const inner = blockArb(depth, len - 1, false);
    options.push({
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('choice' as const),
        branches: fc
          .tuple(blockArb(depth, len - 1), fc.array(inner, { minLength: 1, maxLength: 2 }))
          .map(([first, rest]) => [first, ...rest]),
      }),
    });
    if (depth < 3) {
      options.push({
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('parallel' as const),
          branches: fc.array(blockArb(depth + 1, len - 1), { minLength: 2, maxLength: 3 }),
          join: fc.constantFrom('all' as const, 'all' as const, 'any' as const, 'atLeast' as const),
        }),
      });
    }
  }
  return fc
    .tuple(fc.array(fc.oneof(...options), { minLength: 1, maxLength: len }), fc.nat(11))
    .map(([nodes, f]) => (f === 0 && mayFail ? [...nodes, { kind: 'fail' as const }] : nodes));
}

/** What the oracles need to know about each generated step. */
export interface Meta {
  node: Node;
  /** Enclosing parallel branches, outermost first, as `parallel#branch`. */
  chain: string[];
}
export type Compiled = { id: string; node: Node; branches?: Compiled[][] };

export function compile(body: Node[], onFailure: Policy, flagSeed: number[]) {
  let counter = 0;
  const steps: Record<string, StepDefinition> = {};
  const meta = new Map<string, Meta>();
  const flags: Record<string, number> = {};
  const signals: string[] = [];
  const block = (nodes: Node[], cont: string | undefined, chain: string[]): Compiled[] => {
    const ids = nodes.map(() => `n${counter++}`);
    return nodes.map((node, i) => {
      const id = ids[i]!;
      const next = i + 1 < nodes.length ? ids[i + 1] : cont;
      const link = next === undefined ? {} : { next };
      meta.set(id, { node, chain });
      const out: Compiled = { id, node };
      switch (node.kind) {
        case 'task':
          steps[id] = {
            kind: 'task',
            handler: 'work',
            ...(node.comp ? { compensate: 'undo', compensateOnFailure: node.cof } : {}),
            ...(node.pivot ? { pivot: true } : {}),
            ...(node.onFailure ? { onFailure: node.onFailure } : {}),
            retry: { maxAttempts: node.attempts, initialMs: 100, factor: 2, maxMs: 1000, jitter: 0.5 },
            timeoutMs: node.timeout,
            ...link,
          };
          break;
        case 'savepoint':
          steps[id] = { kind: 'savepoint', ...link };
          break;
        case 'fail':
          steps[id] = { kind: 'fail', error: { message: `fail at ${id}`, code: 'EXPLICIT' } };
          break;
        case 'wait':
        case 'human': {
          const signal = `s-${id}`;
          signals.push(signal);
          const timeout = node.timeout === undefined ? {} : { timeoutMs: node.timeout };
          steps[id] = { kind: node.kind, signal, ...timeout, ...link };
          break;
        }
        case 'sleep':
          steps[id] = { kind: 'sleep', ms: node.ms, ...link };
          break;
        case 'choice': {
          out.branches = node.branches.map((b) => block(b, next, chain));
          flags[id] = (flagSeed[counter % flagSeed.length] ?? 0) % node.branches.length;
          const entries = out.branches.map((b) => b[0]!.id);
          steps[id] = {
            kind: 'choice',
            branches: entries.slice(0, -1).map((e, k) => ({
              when: { '==': [{ var: `input.flags.${id}` }, k] },
              next: e,
            })),
            otherwise: entries[entries.length - 1]!,
          };
          break;
        }
        case 'parallel': {
          out.branches = node.branches.map((b, k) => block(b, undefined, [...chain, `${id}#${k}`]));
          const n = node.branches.length;
          steps[id] = {
            kind: 'parallel',
            branches: out.branches.map((b) => b[0]!.id),
            join: node.join === 'atLeast' ? { atLeast: Math.min(2, n) } : node.join,
            ...link,
          };
          break;
        }
      }
      return out;
    });
  };
  const top = block(body, undefined, []);
  const definition = defineWorkflow({
    name: 'gen',
    version: 1,
    start: top[0]!.id,
    onFailure,
    limits: { log: 8 },
    steps,
  });
  return { definition, meta, flags, signals, top };
}

export type Intent =
  | { kind: 'complete' | 'fail'; pick: number; stale: boolean; retryable: boolean }
  | { kind: 'zombie'; pick: number; ok: boolean }
  | { kind: 'tick'; advance: number }
  | { kind: 'signal'; pick: number; decision: 'approve' | 'reject' | 'none'; dup: number }
  | { kind: 'requeue'; pick: number; all: boolean }
  | { kind: 'cancel' | 'abort' };

export const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete' as const, 'complete' as const, 'fail' as const),
      pick: fc.nat(),
      stale: fc.boolean(),
      retryable: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('zombie' as const), pick: fc.nat(), ok: fc.boolean() }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      advance: fc.constantFrom(0, 100, 400, 1500, 6000, 25_000),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('signal' as const),
      pick: fc.nat(),
      decision: fc.constantFrom('approve' as const, 'approve' as const, 'reject' as const, 'none' as const),
      dup: fc.nat(4),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('requeue' as const), pick: fc.nat(), all: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('abort' as const, 'cancel' as const) }) },
);

export type Task = { step: string; phase: 'run' | 'compensate'; attempt: number };

export function toEvent(
  s: Snapshot,
  i: Intent,
  at: number,
  seen: Task[],
  signals: string[],
): WorkflowEvent | null {
  const tasks = Object.keys(s.tasks)
    .sort()
    .map((k) => s.tasks[k]!);
  switch (i.kind) {
    case 'complete':
    case 'fail': {
      if (tasks.length === 0) return null;
      const t = tasks[i.pick % tasks.length]!;
      const attempt = i.stale && t.attempt > 1 ? t.attempt - 1 : t.attempt;
      const base = { at, step: t.step, attempt, phase: t.phase };
      return i.kind === 'complete'
        ? { type: 'task.completed', ...base, output: { ok: true } }
        : { type: 'task.failed', ...base, error: { message: 'boom', retryable: i.retryable } };
    }
    case 'zombie': {
      // A result from any attempt ever dispatched: stale unless it is still the one in flight.
      const t = seen[i.pick % Math.max(1, seen.length)];
      if (!t) return null;
      return i.ok
        ? { type: 'task.completed', at, ...t, output: 'zombie' }
        : { type: 'task.failed', at, ...t, error: { message: 'zombie' } };
    }
    case 'tick':
      return { type: 'tick', at };
    case 'signal': {
      // Names nobody waits for are buffered; a payload without a decision is refused by a live
      // human step and ignored by a buffered one.
      const name = signals[i.pick % (signals.length + 1)] ?? 'stray';
      const payload = i.decision === 'none' ? { note: i.dup } : { decision: i.decision };
      return { type: 'signal', at, name, payload, id: `${name}/${i.dup}` };
    }
    case 'requeue': {
      const parked = Object.keys(s.steps).filter((id) => /dlq/.test(s.steps[id]!.status));
      const one = parked[i.pick % Math.max(1, parked.length)];
      return {
        type: 'requeue',
        at,
        ...(i.all || !one ? {} : { step: one }),
        inputPatch: { patched: i.pick % 7 },
      };
    }
    default:
      return { type: i.kind, at };
  }
}
