import { enableArrayMethods, freeze, Immer } from 'immer';
import {
  type Cx,
  DEFAULT_LOG_LIMIT,
  DEFAULT_MAX_TRANSITIONS,
  DEFAULT_SIGNAL_ID_LIMIT,
  log,
} from './context.js';
import type { DefinitionInput, WorkflowDefinition } from './definition-schema.js';
import { parseEvent, rejectEvent, type WorkflowEvent } from './events.js';
import { enter } from './flow.js';
import { NOOP, type Outcome, rules, run } from './rules.js';
import { isTerminal, type LogEntry, type Snapshot, type StepState } from './snapshot.js';
import { checkSnapshot, initialSnapshot } from './snapshot-check.js';
import { type CompiledWorkflow, compileWorkflow } from './workflow.js';

/** Tuning for {@link step}. */
export interface StepOptions {
  /** Internal transitions one event may cause before the instance fails (default 1000). */
  maxTransitions?: number;
}

// Our own instance, so the library never changes immer settings an application relies on.
const immer = new Immer({ autoFreeze: true });
// Array methods on drafts (push, indexOf, splice, filter...) run on the underlying array instead of
// one proxy trap per element. A plugin, so it also applies to other users of this copy of immer; its
// one caveat, callbacks of filter/find/some seeing plain elements rather than drafts, does not
// matter here: no callback in the reducer mutates what it is given.
enableArrayMethods();

/**
 * Snapshots this module returned, with the workflow they were stepped with. Such a snapshot is
 * deeply frozen and was well formed when it left, so stepping it again skips the structural check.
 */
const produced = new WeakMap<object, CompiledWorkflow>();

/**
 * The reducer: applies one event to a snapshot and returns the next snapshot. Pure and
 * deterministic; returns the same object when the event does not apply; throws a typed error
 * (and changes nothing) when the definition, event or snapshot is malformed.
 */
export function step(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: StepOptions = {},
): Snapshot {
  return reduce(definition, snapshot, event, options, true);
}

/** {@link step} with every event applied through an immer draft: the reference the plain path is tested against. */
export function referenceStep(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: StepOptions = {},
): Snapshot {
  return reduce(definition, snapshot, event, options, false);
}

/** Folds events from nothing; the result equals the snapshot those events produced live. */
export function replay(
  definition: DefinitionInput | WorkflowDefinition,
  events: readonly WorkflowEvent[],
  options?: StepOptions,
): Snapshot | null {
  let s: Snapshot | null = null;
  for (const e of events) s = step(definition, s, e, options);
  return s;
}

function reduce(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: StepOptions,
  plain: boolean,
): Snapshot {
  const wf = compileWorkflow(definition);
  const ev = parseEvent(event);
  const budget = options.maxTransitions ?? DEFAULT_MAX_TRANSITIONS;
  if (snapshot === null || (ev.type === 'start' && ev.reuse && isTerminal(snapshot.status))) {
    if (ev.type !== 'start')
      rejectEvent(`no instance yet: the first event must be start, got ${ev.type}`, 'type');
    const s = initialSnapshot(wf, ev, snapshot);
    const cx: Cx = { wf, s, at: ev.at, budget, logged: [] };
    log(cx, 'workflow.started');
    run(cx, () => enter(cx, wf.definition.start), false);
    derive(s);
    s.log = appendLog(wf, s.log, cx.logged!);
    produced.set(s, wf);
    return freeze(s, true);
  }
  const known = produced.get(snapshot) === wf;
  if (!known) checkSnapshot(wf, snapshot);
  if (isTerminal(snapshot.status)) return snapshot;
  // A signal id already seen: checked on the plain snapshot, not through a draft of the ring.
  if (ev.type === 'signal' && ev.id !== undefined && snapshot.seenSignals.includes(ev.id)) return snapshot;
  const at = Math.max(ev.at, snapshot.updatedAt);
  const logged: LogEntry[] = [];
  let cx: Cx | undefined;
  if (plain && !snapshot.saga && ev.type !== 'cancel' && ev.type !== 'requeue') {
    // The common events run on a plain copy of the parts they usually write (see `plainDraft`).
    // Every other object is shared with the input and frozen, so an event that reaches further
    // throws a TypeError at its first such write, before anything shared changed; immer redoes it.
    cx = { wf, s: plainDraft(snapshot, known), at, budget, logged };
    try {
      if (rules[ev.type](cx, ev as never) === NOOP) return snapshot;
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      cx = undefined;
      logged.length = 0;
    }
  }
  let next: Snapshot;
  if (cx) next = cx.s;
  else {
    let outcome: Outcome;
    const recipe = (draft: Snapshot) => {
      cx = { wf, s: draft, at, budget, logged };
      outcome = rules[ev.type](cx, ev as never);
    };
    // A copy of the frozen result, so status, wake time and the rings can be filled in below.
    next = { ...immer.produce(snapshot, recipe) };
    if (outcome === NOOP) return snapshot;
  }
  // Status and wake time are derived from the finished snapshot, not while the event runs; the two
  // rings (log, seen ids) are appended here too, as new frozen arrays nothing above ever walks.
  derive(next);
  if (logged.length) next.log = appendLog(wf, next.log, logged);
  const id = (cx as Cx | undefined)?.seenId;
  if (id !== undefined) {
    next.seenSignals = ring(
      next.seenSignals,
      [id],
      wf.definition.limits?.signalIds ?? DEFAULT_SIGNAL_ID_LIMIT,
    );
  }
  freezeNew(next);
  produced.set(next, wf);
  return next;
}

/**
 * A writable copy of what the common events change: the top level, every container (steps,
 * tasks, active, completed, timers, inbox) and the state of each step that is active or has a
 * task in flight. A snapshot this module did not produce may have unfrozen parts anywhere, so
 * for it every step state and task is copied.
 */
function plainDraft(s: Snapshot, known: boolean): Snapshot {
  const steps = { ...s.steps };
  const tasks = { ...s.tasks };
  const d: Snapshot = {
    ...s,
    steps,
    tasks,
    active: [...s.active],
    completed: [...s.completed],
    timers: [...s.timers],
    inbox: [...s.inbox],
  };
  if (!known) {
    for (const id in steps) steps[id] = ownState(steps[id]!);
    for (const key in tasks) tasks[key] = { ...tasks[key]! };
    return d;
  }
  for (const id of s.active) if (steps[id]) steps[id] = ownState(steps[id]);
  for (const key in tasks) {
    const id = tasks[key]!.step;
    if (steps[id] && steps[id] === s.steps[id]) steps[id] = ownState(steps[id]);
  }
  return d;
}

/** A step state with its own copies of the arrays and objects transitions change in place. */
function ownState(st: StepState): StepState {
  const out = { ...st };
  if (st.batch) out.batch = { ...st.batch, items: [...st.batch.items], keys: [...st.batch.keys] };
  if (st.branches) {
    out.branches = [...st.branches];
    if (Array.isArray(st.output)) out.output = [...st.output];
  }
  return out;
}

/** Freezes a value and every plain object or array under it that is not frozen yet (as immer's autoFreeze). */
function freezeNew(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  if (Array.isArray(v)) {
    Object.freeze(v);
    for (let i = 0; i < v.length; i++) freezeNew(v[i]);
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return;
  Object.freeze(v);
  for (const k in v) freezeNew((v as Record<string, unknown>)[k]);
}

/** Sets status and `wakeAt` as the rest of a (plain, not draft) snapshot implies them. */
function derive(s: Snapshot): void {
  let wakeAt: number | null = null;
  for (const t of s.timers) if (wakeAt === null || t.at < wakeAt) wakeAt = t.at;
  let running = false;
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    if (wakeAt === null || t.deadline < wakeAt) wakeAt = t.deadline;
    if (!t.detached) running = true;
  }
  s.wakeAt = wakeAt;
  if (isTerminal(s.status)) return;
  let dlq = false;
  let compensationDlq = false;
  for (const id in s.steps) {
    const status = s.steps[id]!.status;
    if (status === 'dlq') dlq = true;
    else if (status === 'compensation-dlq') compensationDlq = true;
  }
  if (s.saga) s.status = compensationDlq ? 'dlq' : 'compensating';
  else if (dlq) s.status = 'dlq';
  else s.status = running ? 'running' : 'waiting';
}

/** The log ring with this event's transitions appended, cut to `limits.log`. */
function appendLog(wf: CompiledWorkflow, log: readonly LogEntry[], fresh: LogEntry[]): LogEntry[] {
  return ring(log, fresh, wf.definition.limits?.log ?? DEFAULT_LOG_LIMIT);
}

/**
 * `base` then `fresh`, keeping the last `limit`, as a new array (frozen with the rest of the
 * snapshot). Filled by index into a preallocated array: V8 copies a slice of a frozen array slowly.
 */
function ring<T>(base: readonly T[], fresh: readonly T[], limit: number): T[] {
  const total = base.length + fresh.length;
  const n = Math.min(limit, total);
  const skip = total - n;
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) {
    const j = i + skip;
    out[i] = j < base.length ? base[j]! : fresh[j - base.length]!;
  }
  return out;
}
