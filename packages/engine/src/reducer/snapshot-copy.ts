import { isTerminal, type Snapshot, type StepState } from '../snapshot.js';
import { taskDue } from './task-lease.js';

// Plain copies and freezing of snapshots, for the reducer. V8 copies a frozen object with spread
// or Object.assign about ten times slower than an unfrozen one, and Object.isFrozen of a frozen
// object is slow too, so the top level is copied field by field and freezing skips what an
// event left untouched.

/**
 * A shallow copy with the top-level keys in one fixed order (optional ones only when set), so
 * the JSON of a snapshot does not depend on the order its fields were first written in. Keys
 * the engine does not know are kept, after its own. `output`: the instance's output, if it
 * has one now (default: the one `s` has).
 */
export function copySnapshot(s: Snapshot, output: unknown = s.output): Snapshot {
  const out = {
    schemaVersion: s.schemaVersion,
    id: s.id,
    workflow: s.workflow,
    version: s.version,
    run: s.run,
    status: s.status,
    input: s.input,
  } as Snapshot;
  if (output !== undefined) out.output = output;
  if (s.error !== undefined) out.error = s.error;
  if (s.compensationError !== undefined) out.compensationError = s.compensationError;
  if (s.reason !== undefined) out.reason = s.reason;
  if (s.trace !== undefined) out.trace = s.trace;
  if (s.parent !== undefined) out.parent = s.parent;
  if (s.schedule !== undefined) out.schedule = s.schedule;
  if (s.fairKey !== undefined) out.fairKey = s.fairKey;
  if (s.priority !== undefined) out.priority = s.priority;
  if (s.search !== undefined) out.search = s.search;
  out.steps = s.steps;
  out.active = s.active;
  out.completed = s.completed;
  out.tasks = s.tasks;
  out.timers = s.timers;
  out.inbox = s.inbox;
  out.seenSignals = s.seenSignals;
  if (s.saga !== undefined) out.saga = s.saga;
  out.wakeAt = s.wakeAt;
  out.createdAt = s.createdAt;
  out.updatedAt = s.updatedAt;
  out.log = s.log;
  // Unknown keys are rare: count the keys of both before looking for them (`out` may have an
  // output `s` lacks).
  let keys = s.output === undefined && output !== undefined ? 1 : 0;
  for (const _ in s) keys++;
  for (const _ in out) keys--;
  if (keys !== 0) {
    for (const k in s) {
      if (Object.hasOwn(s, k) && !Object.hasOwn(out, k) && s[k as keyof Snapshot] !== undefined) {
        Object.defineProperty(out, k, {
          value: s[k as keyof Snapshot],
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
  }
  return out;
}

/**
 * A writable copy of what the common events change: the top level, every container (steps,
 * tasks, active, completed, timers, inbox) and the state of each step that is active or has a
 * task in flight. A snapshot the reducer did not produce may have unfrozen parts anywhere, so
 * for it (`known` false) every step state and task is copied.
 */
export function plainDraft(s: Snapshot, known: boolean): Snapshot {
  const d = copySnapshot(s);
  const steps = { ...s.steps };
  const tasks = { ...s.tasks };
  d.steps = steps;
  d.tasks = tasks;
  d.active = [...s.active];
  d.completed = [...s.completed];
  d.timers = [...s.timers];
  d.inbox = [...s.inbox];
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
  if (st.map) {
    out.map = { ...st.map, running: [...st.map.running], failed: [...st.map.failed] };
    if (st.map.undo) out.map.undo = [...st.map.undo];
    if (Array.isArray(st.output)) out.output = [...st.output];
  }
  return out;
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;

/** Freezes a value and every plain object or array under it that is not frozen yet . */
export function freezeNew(v: unknown): void {
  if (!isObject(v) || Object.isFrozen(v)) return;
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

/**
 * {@link freezeNew} for a new version of a deeply frozen snapshot, walking the snapshot's own
 * structure: a part identical to the one at the same place in `base` is frozen already, so only
 * what differs is looked at. The log and seen-id rings must be frozen by the caller, and flow
 * control's parts by its rules (`LimitRules.freeze`).
 */
export function freezeChanged(s: Snapshot, base: Snapshot): void {
  if (s.input !== base.input) freezeNew(s.input);
  if (s.output !== base.output) freezeNew(s.output);
  if (s.error !== base.error) freezeNew(s.error);
  if (s.compensationError !== base.compensationError) freezeNew(s.compensationError);
  if (s.saga !== base.saga) freezeNew(s.saga);
  if (s.steps !== base.steps) {
    for (const id in s.steps) {
      const st = s.steps[id]!;
      const old = base.steps[id];
      // Any state that is not the base's is the event's own (freezing a frozen one changes nothing).
      if (st !== old) freezeState(st, old);
    }
    Object.freeze(s.steps);
  }
  if (s.tasks !== base.tasks) {
    for (const key in s.tasks) Object.freeze(s.tasks[key]);
    Object.freeze(s.tasks);
  }
  Object.freeze(s.active);
  Object.freeze(s.completed);
  for (const t of s.timers) Object.freeze(t);
  Object.freeze(s.timers);
  if (s.inbox !== base.inbox) for (const r of s.inbox) freezeNew(r);
  Object.freeze(s.inbox);
  Object.freeze(s);
}

function freezeState(st: StepState, old: StepState | undefined): void {
  Object.freeze(st);
  if (st.output !== old?.output) freezeNew(st.output);
  if (st.error !== old?.error) freezeNew(st.error);
  if (st.compensation !== old?.compensation) freezeNew(st.compensation);
  if (st.heartbeatDetails !== old?.heartbeatDetails) freezeNew(st.heartbeatDetails);
  if (st.branches) Object.freeze(st.branches);
  if (st.map !== old?.map) freezeNew(st.map);
  if (st.child !== old?.child) freezeNew(st.child);
  const batch = st.batch;
  if (batch && batch !== old?.batch) {
    Object.freeze(batch);
    Object.freeze(batch.keys);
    if (batch.items !== old?.batch?.items) for (const item of batch.items) freezeNew(item);
    Object.freeze(batch.items);
  }
}

/** Sets status and `wakeAt` as the rest of a (plain, not draft) snapshot implies them. */
export function derive(s: Snapshot): void {
  let wakeAt: number | null = null;
  for (const t of s.timers) if (wakeAt === null || t.at < wakeAt) wakeAt = t.at;
  let running = false;
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    const due = taskDue(t);
    if (wakeAt === null || due < wakeAt) wakeAt = due;
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

/**
 * `base` then `fresh`, keeping the last `limit`, as a new array. Filled by index into a
 * preallocated array: V8 copies a slice of a frozen array slowly.
 */
export function ring<T>(base: readonly T[], fresh: readonly T[], limit: number): T[] {
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
