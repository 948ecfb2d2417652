import {
  defineWorkflow,
  isTerminal,
  type Snapshot,
  type StepDefinition,
  step,
  type WorkflowDefinition,
  type WorkflowEvent,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// Random workflows (sequences, choices, nested parallels, savepoints, waits) driven by random
// events, checked against the oracles of SPEC §11 with a model built from the accepted events.

type Policy = 'compensate' | 'dlq' | 'fail';
type Node =
  | {
      kind: 'task';
      comp: boolean;
      cof: boolean;
      pivot: boolean;
      onFailure?: Policy;
      attempts: number;
      timeout: number;
    }
  | { kind: 'savepoint' | 'fail' }
  | { kind: 'wait' | 'human'; timeout?: number }
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
function blockArb(depth: number, len: number, mayFail = true): fc.Arbitrary<Node[]> {
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
interface Meta {
  node: Node;
  /** Enclosing parallel branches, outermost first, as `parallel#branch`. */
  chain: string[];
}
type Compiled = { id: string; node: Node; branches?: Compiled[][] };

function compile(body: Node[], onFailure: Policy, flagSeed: number[]) {
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

type Intent =
  | { kind: 'complete' | 'fail'; pick: number; stale: boolean; retryable: boolean }
  | { kind: 'zombie'; pick: number; ok: boolean }
  | { kind: 'tick'; advance: number }
  | { kind: 'signal'; pick: number; decision: 'approve' | 'reject' | 'none'; dup: number }
  | { kind: 'requeue'; pick: number; all: boolean }
  | { kind: 'cancel' | 'abort' };

const intentArb: fc.Arbitrary<Intent> = fc.oneof(
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

type Task = { step: string; phase: 'run' | 'compensate'; attempt: number };

function toEvent(s: Snapshot, i: Intent, at: number, seen: Task[], signals: string[]): WorkflowEvent | null {
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

/** What the accepted events say happened, independent of the reducer's bookkeeping. */
interface Model {
  /** Forward completions (task ids) and savepoint passes (`sp:id`), in order. */
  done: string[];
  /** Successful compensations per step. */
  undone: Map<string, number>;
  /** `done` as it was when the instance first left forward progress (compensating or failed). */
  doneAtFailure: string[] | null;
}

function observe(m: Model, prev: Snapshot | null, next: Snapshot, e: WorkflowEvent, meta: Map<string, Meta>) {
  if (e.type === 'task.completed') {
    if ((e.phase ?? 'run') === 'run') m.done.push(e.step);
    else m.undone.set(e.step, (m.undone.get(e.step) ?? 0) + 1);
  }
  for (const [id, st] of Object.entries(next.steps)) {
    if (meta.get(id)!.node.kind === 'savepoint' && st.status === 'completed') {
      if (prev?.steps[id]?.status !== 'completed') m.done.push(`sp:${id}`);
    }
  }
  if (m.doneAtFailure === null && (next.status === 'compensating' || next.status === 'failed')) {
    m.doneAtFailure = [...m.done];
  }
}

function checkTerminal(s: Snapshot, m: Model, g: ReturnType<typeof compile>, onFailure: Policy) {
  const node = (id: string) => g.meta.get(id)!.node;
  const compensable = (id: string) => {
    const n = node(id);
    return n.kind === 'task' && n.comp;
  };
  if (isTerminal(s.status)) {
    expect(s.tasks).toEqual({});
    expect(s.timers).toEqual([]);
    expect(s.wakeAt).toBeNull();
  }
  if (s.status === 'completed') {
    expect([...m.undone.keys()]).toEqual([]);
    expect(s.error).toBeUndefined();
    expect(walk(g.top, s, g.flags, true)).toBe(true);
    return;
  }
  if (s.status !== 'failed' && s.status !== 'cancelled') return;
  let expected: Set<string>;
  if (s.status === 'cancelled') {
    expected = new Set(m.done.filter((id) => !id.startsWith('sp:') && compensable(id)));
  } else {
    const failed = s.error?.step;
    expect(failed).toBeDefined();
    const f = node(failed!);
    const pivot = (m.doneAtFailure ?? m.done).some((id) => {
      const n = g.meta.get(id)?.node;
      return n?.kind === 'task' && n.pivot;
    });
    const policy: Policy =
      f.kind === 'fail'
        ? pivot || onFailure === 'fail'
          ? 'fail'
          : 'compensate'
        : pivot
          ? 'dlq'
          : ((f.kind === 'task' ? f.onFailure : undefined) ?? onFailure);
    expect(policy).not.toBe('dlq');
    if (policy === 'fail') expected = new Set();
    else {
      const chain = g.meta.get(failed!)!.chain;
      const guards = (sp: string) => g.meta.get(sp)!.chain.every((c, i) => chain[i] === c);
      let from = 0;
      m.done.forEach((id, i) => {
        if (id.startsWith('sp:') && guards(id.slice(3))) from = i + 1;
      });
      expected = new Set(m.done.slice(from).filter((id) => !id.startsWith('sp:') && compensable(id)));
    }
  }
  for (const id of g.meta.keys()) {
    const n = m.undone.get(id) ?? 0;
    if (expected.has(id)) {
      expect({ id, compensations: n }).toEqual({ id, compensations: 1 });
      expect(s.steps[id]?.status).toBe('compensated');
    } else if (m.done.includes(id) || !compensable(id)) {
      expect({ id, compensations: n }).toEqual({ id, compensations: 0 });
    } else {
      // A step that failed may be compensated once, only if it opted in.
      const t = node(id);
      expect(n).toBeLessThanOrEqual(t.kind === 'task' && t.cof ? 1 : 0);
    }
  }
}

/** Whether every step on the taken path completed (asserting it when `must`). */
function walk(block: Compiled[], s: Snapshot, flags: Record<string, number>, must: boolean): boolean {
  for (const c of block) {
    const ok = s.steps[c.id]?.status === 'completed';
    if (must)
      expect({ step: c.id, status: s.steps[c.id]?.status }).toEqual({ step: c.id, status: 'completed' });
    if (!ok) return false;
    if (c.node.kind === 'choice') {
      if (!walk(c.branches![flags[c.id]!]!, s, flags, must)) return false;
      return true; // the branch leads on to what follows the choice
    }
    if (c.node.kind === 'parallel') {
      const n = c.branches!.length;
      const need = c.node.join === 'all' ? n : c.node.join === 'any' ? 1 : Math.min(2, n);
      const full = c.branches!.filter((b) => walk(b, s, flags, false)).length;
      if (must) expect(full).toBeGreaterThanOrEqual(need);
      if (full < need) return false;
    }
  }
  return true;
}

/** Finishes an instance like a patient operator would; it must reach a terminal status. */
function drain(
  s: Snapshot,
  at: number,
  apply: (e: WorkflowEvent) => Snapshot,
  listens: (id: string) => boolean,
): Snapshot {
  let now = at;
  for (let i = 0; i < 400 && !isTerminal(s.status); i++) {
    const key = Object.keys(s.tasks).sort()[0];
    const listener = s.active.find(listens);
    if (key) {
      const t = s.tasks[key]!;
      s = apply({ type: 'task.completed', at: now, step: t.step, attempt: t.attempt, phase: t.phase });
    } else if (listener) {
      s = apply({ type: 'signal', at: now, name: `s-${listener}`, payload: { decision: 'approve' } });
    } else if (s.wakeAt !== null) {
      now = Math.max(now, s.wakeAt);
      s = apply({ type: 'tick', at: now });
    } else if (s.status === 'dlq') s = apply({ type: 'requeue', at: now });
    else throw new Error(`stuck in ${s.status}: ${JSON.stringify(s)}`);
  }
  expect(isTerminal(s.status)).toBe(true);
  return s;
}

const caseArb = fc.record({
  body: blockArb(0, 4),
  onFailure: fc.constantFrom<Policy>('compensate', 'compensate', 'compensate', 'dlq', 'fail'),
  flagSeed: fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }),
  intents: fc.array(intentArb, { maxLength: 50 }),
});

const RUNS = Number(process.env.SAGA_RUNS ?? 1000);

describe('saga oracles over random workflows and events (SPEC §11)', () => {
  it(
    'terminal is final, completed ⇒ path done, failed/cancelled ⇒ compensated once, version, replay',
    () => {
      fc.assert(
        fc.property(caseArb, ({ body, onFailure, flagSeed, intents }) => {
          const g = compile(body, onFailure, flagSeed);
          const def: WorkflowDefinition = g.definition;
          let now = 1_000;
          const start: WorkflowEvent = { type: 'start', at: now, id: 'p', input: { flags: g.flags } };
          let s = step(def, null, start);
          const accepted: WorkflowEvent[] = [start];
          const m: Model = { done: [], undone: new Map(), doneAtFailure: null };
          const seen: Task[] = [];
          observe(m, null, s, start, g.meta);
          const apply = (e: WorkflowEvent): Snapshot => {
            const next = step(def, s, e);
            if (isTerminal(s.status)) expect(next).toBe(s);
            if (next !== s) {
              expect(next.version).toBe(s.version + 1);
              accepted.push(e);
              observe(m, s, next, e, g.meta);
              for (const t of Object.values(next.tasks)) {
                if (!seen.some((x) => x.step === t.step && x.phase === t.phase && x.attempt === t.attempt))
                  seen.push({ step: t.step, phase: t.phase, attempt: t.attempt });
              }
            }
            s = next;
            return next;
          };
          for (const i of intents) {
            if (i.kind === 'tick') now += i.advance;
            const e = toEvent(s, i, now, seen, g.signals);
            if (!e) continue;
            // A decision-less signal is refused when a human step listens for it once due timers
            // have fired (the signal fires them first); the refused event changes nothing.
            const refusable =
              e.type === 'signal' &&
              !(e.payload as { decision?: string }).decision &&
              [...g.meta].some(([id, mt]) => mt.node.kind === 'human' && `s-${id}` === e.name);
            try {
              apply(e);
            } catch (err) {
              if (!refusable || (err as { code?: string }).code !== 'INVALID_EVENT') throw err;
            }
            if (isTerminal(s.status)) checkTerminal(s, m, g, onFailure);
          }
          const kind = (id: string) => g.meta.get(id)!.node.kind;
          s = drain(s, now, apply, (id) => kind(id) === 'wait' || kind(id) === 'human');
          checkTerminal(s, m, g, onFailure);
          // Nothing applies after a terminal status.
          expect(step(def, s, { type: 'cancel', at: now + 1e9 })).toBe(s);
          expect(step(def, s, { type: 'tick', at: now + 1e9 })).toBe(s);
          let r: Snapshot | null = null;
          for (const e of accepted) r = step(def, r, e);
          expect(JSON.stringify(r)).toBe(JSON.stringify(s));
        }),
        { numRuns: RUNS },
      );
    },
    RUNS * 120,
  ); // ~10 ms a run alone; room for a loaded machine running every project at once
});
