import {
  isTerminal,
  type Snapshot,
  step,
  type WorkflowDefinition,
  type WorkflowEvent,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  blockArb,
  type Compiled,
  compile,
  intentArb,
  type Meta,
  type Policy,
  type Task,
  toEvent,
} from './saga-gen.js';

// Random workflows (sequences, choices, nested parallels, savepoints, waits) driven by random
// events, checked against the saga oracles with a model built from the accepted events.

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
  // A pivot that completed during the rollback (a sibling branch's detached handler) stopped it:
  // the compensations dispatched before then ran, once each; nothing after.
  const stopped = m.done.some((id) => {
    const n = g.meta.get(id)?.node;
    return n?.kind === 'task' && n.pivot && !(m.doneAtFailure ?? []).includes(id);
  });
  for (const id of g.meta.keys()) {
    const n = m.undone.get(id) ?? 0;
    if (expected.has(id) && stopped) {
      expect(n).toBeLessThanOrEqual(1);
    } else if (expected.has(id)) {
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

describe('saga oracles over random workflows and events', () => {
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
          const begun = new Set<string>();
          const isPivot = (id: string) => {
            const n = g.meta.get(id)?.node;
            return n?.kind === 'task' && n.pivot;
          };
          const apply = (e: WorkflowEvent): Snapshot => {
            const next = step(def, s, e);
            if (isTerminal(s.status)) expect(next).toBe(s);
            // No compensation begins for a step that completed before a completed pivot (one that
            // began before the pivot completed runs to its end: retries, a requeue).
            for (const t of Object.values(next.tasks)) {
              if (t.phase !== 'compensate' || begun.has(t.step)) continue;
              begun.add(t.step);
              const at = m.done.indexOf(t.step);
              expect(m.done.slice(at + 1).some(isPivot), `${t.step} compensated past a pivot`).toBe(false);
            }
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
            // A signal no step of the definition listens for ('stray') is refused unless the
            // instance has ended (then nothing applies at all).
            const stray = e.type === 'signal' && !g.signals.includes(e.name);
            // A cancel once a pivot has completed is refused (PAST_PIVOT) and changes nothing.
            const pastPivot =
              e.type === 'cancel' &&
              !isTerminal(s.status) &&
              m.done.some(isPivot) &&
              s.saga?.mode !== 'cancel';
            const before = s;
            try {
              apply(e);
              if (stray) expect(s).toBe(before); // never buffered
              expect(pastPivot, 'a cancel past a pivot was accepted').toBe(false);
            } catch (err) {
              const code = (err as { code?: string }).code;
              if (
                !(stray && code === 'UNKNOWN_SIGNAL') &&
                !(refusable && code === 'INVALID_EVENT') &&
                !(code === 'PAST_PIVOT' && pastPivot)
              )
                throw err;
              expect(s).toBe(before);
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
