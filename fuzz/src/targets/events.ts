import {
  composition,
  type Snapshot,
  step,
  type WorkflowDefinition,
  type WorkflowEvent,
} from '@stepfold/engine';
import fc from 'fast-check';
import { reduce } from '../../../packages/engine/dist/reducer/reducer.js';
import type { Target } from '../driver.js';
import { expect, typedOrValue } from '../guard.js';
import { hostileJson, hostileSmall, mutate, mutationsArb, protoObject } from '../hostile.js';
import { SEED_INPUTS, seedDefinitions } from '../seeds.js';
import { checkSnapshotOut, isJson } from './definitions.js';

/** Every kind a fuzzed definition may use. */
const KINDS = [composition];

// Events: snapshots reached by valid events, then random and mutated events into `step`. The
// answer is a snapshot that is JSON and loads again, or a typed error; the snapshot passed in is
// unchanged either way, and the reference path (every event on a deep copy) agrees.

/** A state to send events to: its definition and a snapshot some valid events reached. */
export interface State {
  def: WorkflowDefinition;
  snapshot: Snapshot;
}

/** The events that would be valid now: results of every open task, signals, timers, controls. */
export function validEvents(def: WorkflowDefinition, s: Snapshot, at: number): WorkflowEvent[] {
  const out: WorkflowEvent[] = [];
  for (const t of Object.values(s.tasks)) {
    const base = {
      at,
      step: t.step,
      attempt: t.attempt,
      ...(t.phase === 'compensate' ? { phase: t.phase } : {}),
    };
    const item = t.item === undefined ? {} : { item: t.item };
    out.push({ type: 'task.completed', ...base, ...item, output: { ok: at } } as WorkflowEvent);
    out.push({
      type: 'task.failed',
      ...base,
      ...item,
      error: { message: 'x', retryable: at % 2 === 0 },
    } as WorkflowEvent);
    if (t.leaseUntil !== undefined) out.push({ type: 'task.heartbeat', ...base, ...item } as WorkflowEvent);
    if (t.child !== undefined) {
      out.push({
        type: 'child.ended',
        at,
        step: t.step,
        key: t.idempotencyKey,
        ...item,
        child: t.child,
        status: 'completed',
        output: { ok: 1 },
      } as WorkflowEvent);
    }
  }
  for (const st of Object.values(def.steps)) {
    const signal = (st as { signal?: unknown }).signal;
    if (typeof signal === 'string')
      out.push({ type: 'signal', at, name: signal, payload: { n: 1 }, id: `s-${at}` });
    if (st.kind === 'human')
      out.push({ type: 'signal', at, name: st.id, payload: { decision: 'approve', by: 'fz' } });
  }
  out.push({ type: 'tick', at: s.wakeAt ?? at });
  out.push({ type: 'cancel', at, reason: 'fz' });
  out.push({ type: 'abort', at });
  out.push({ type: 'requeue', at, inputPatch: { n: 2 } });
  out.push({ type: 'revert', at });
  return out;
}

/** Walks each seed a few valid events deep (a fixed PRNG): the states the hostile events hit. */
function states(): State[] {
  const out: State[] = [];
  let rnd = 12345;
  const next = () => {
    rnd = (rnd * 1103515245 + 12345) & 0x7fffffff;
    return rnd;
  };
  for (const def of seedDefinitions()) {
    for (const input of SEED_INPUTS) {
      let s = step(def, null, { type: 'start', at: 1_000, id: `ev-${def.name}`, input }, { kinds: KINDS });
      out.push({ def, snapshot: s });
      let at = 1_000;
      for (let i = 0; i < 12; i++) {
        at += next() % 200_000;
        const options = validEvents(def, s, at).filter((e) => e.type !== 'cancel' && e.type !== 'abort');
        const e = options[next() % options.length]!;
        try {
          s = step(def, s, e, { kinds: KINDS });
        } catch {
          continue;
        }
        if (i % 3 === 2) out.push({ def, snapshot: s });
      }
      out.push({ def, snapshot: s });
    }
  }
  return out;
}

const anyOf = (...xs: unknown[]) => fc.constantFrom(...xs);

/** An event from loose parts (the shape of events.property.test.ts), with hostile values among them. */
const looseEvent = fc
  .record(
    {
      type: anyOf(
        'start',
        'task.completed',
        'task.failed',
        'task.released',
        'task.heartbeat',
        'child.ended',
        'tick',
        'signal',
        'cancel',
        'abort',
        'requeue',
        'revert',
        'explode',
        7,
      ),
      at: fc.oneof(anyOf(0, 1, 1.5, -1, 8.64e15, 8.64e15 + 1, 2 ** 53, Number.NaN, '5'), hostileSmall),
      step: fc.oneof(anyOf('reserve', 'a', 't', 'w', 'hu', 'sub', 'lines', 'sums', 'manager'), hostileSmall),
      name: fc.oneof(anyOf('go', 'approved', 'item', 'receipt', 'manager', 'hu', '__proto__'), hostileSmall),
      attempt: anyOf(1, 0, 2, 2.5, 1_000_001, '1', -1),
      phase: anyOf('run', 'compensate', 'other', null),
      key: hostileSmall,
      item: anyOf(0, 1, -1, 1.5, 10_000, '0'),
      child: hostileSmall,
      status: anyOf('completed', 'failed', 'cancelled', 'aborted', 'running'),
      id: hostileSmall,
      reason: hostileSmall,
      reuse: anyOf(true, false, 'yes'),
      handoff: anyOf(true, false, 1),
      input: hostileJson,
      output: hostileJson,
      payload: fc.oneof(
        hostileJson,
        fc.constant(null).map(() => protoObject()),
      ),
      error: fc.oneof(
        hostileSmall,
        fc.record({ message: hostileSmall, retryable: anyOf(true, false, 'no') }),
      ),
      inputPatch: fc.oneof(
        hostileSmall,
        fc.constant(null).map(() => protoObject()),
      ),
      trace: hostileSmall,
    },
    { requiredKeys: [] },
  )
  .map((e) => e as unknown);

type Input = { state: number; event: unknown; thaw: boolean };

export const events: Target<Input, State[]> = {
  name: 'events',
  runs: 40_000,
  async open() {
    return states();
  },
  arbitrary(pool) {
    const state = fc.nat(pool.length - 1);
    const mutated = fc
      .record({ state, pick: fc.nat(), later: fc.nat(10_000_000), mutations: mutationsArb(1, 3) })
      .map(({ state, pick, later, mutations }) => {
        const { def, snapshot } = pool[state]!;
        const valid = validEvents(def, snapshot, snapshot.updatedAt + later);
        return { state, event: mutate(valid[pick % valid.length], mutations) };
      });
    const loose = fc.record({ state, event: looseEvent });
    const anything = fc.record({ state, event: fc.anything({ maxDepth: 2 }) });
    return fc
      .tuple(
        fc.oneof(
          { weight: 6, arbitrary: mutated },
          { weight: 3, arbitrary: loose },
          { weight: 1, arbitrary: anything },
        ),
        fc.boolean(),
      )
      .map(([x, thaw]) => ({ ...x, thaw }));
  },
  check({ state, event, thaw }, pool) {
    const { def, snapshot } = pool[state]!;
    // Frozen as step returned it, or thawed as a store's load gives it (checked in full then).
    const s = thaw ? (JSON.parse(JSON.stringify(snapshot)) as Snapshot) : snapshot;
    const before = JSON.stringify(s);
    const eventText = textOf(event);
    const r = typedOrValue(() => step(def, s, event as WorkflowEvent, { kinds: KINDS }), 'step');
    expect(JSON.stringify(s) === before, 'step changed the snapshot it was given');
    if (eventText !== undefined) expect(textOf(event) === eventText, 'step changed the event it was given');
    // The reference: the same event on a deep copy must give the same answer.
    const copy = JSON.parse(before) as Snapshot;
    const ref = typedOrValue(
      () => reduce(def, copy, event as WorkflowEvent, { kinds: KINDS, reference: true }).snapshot,
      'reference step',
    );
    if (r.ok && ref.ok) {
      const unchanged = r.value === s;
      expect(
        unchanged === (ref.value === copy),
        'step and the reference disagree on whether the event applied',
      );
      if (!unchanged)
        expect(JSON.stringify(r.value) === JSON.stringify(ref.value), 'step and the reference disagree');
    } else {
      expect(
        r.ok === ref.ok,
        () => `step ${r.ok ? 'applied' : 'refused'} what the reference ${ref.ok ? 'applied' : 'refused'}`,
      );
      const code = (e: Error) => (e as { code?: string }).code;
      if (!r.ok && !ref.ok)
        expect(code(r.error) === code(ref.error), 'step and the reference refuse differently');
    }
    if (!r.ok || r.value === s) return;
    expect(r.value.version === s.version + 1, 'a written event did not bump the version by one');
    checkSnapshotOut(def, r.value, 'step', eventText !== undefined && isJson(event, eventText));
  },
};

function textOf(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}
