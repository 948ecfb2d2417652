import type { StepDefinition, StepOf } from '../definition/schema.js';
import type { ErrorInfo, Snapshot, StepState, TaskState, TimerState } from '../snapshot.js';
import type { Cx } from './kinds/step-rules.js';
import { DEFAULT_TIMEOUT_MS } from './retry-policy.js';
import { attemptLeaseMs, leased, leaseMs } from './task-lease.js';

/** Default bound on internal transitions one event may cause. */
export const DEFAULT_MAX_TRANSITIONS = 1000;
/**
 * Default number of transitions kept in the snapshot's log ring: the last few events, for
 * inspection. It is written with every snapshot, so it stays short; hooks see every transition
 * whatever the limit.
 */
export const DEFAULT_LOG_LIMIT = 16;
/** Default number of buffered signals an instance accepts. */
export const DEFAULT_INBOX_LIMIT = 100;
/**
 * How many recent signal ids are remembered for deduplication unless `limits.signalIds` says
 * otherwise. The ring is part of every snapshot, so it is kept small: a redelivery is dropped
 * while fewer than this many other signals with ids were accepted after the original.
 */
export const DEFAULT_SIGNAL_ID_LIMIT = 64;

export type { Cx } from './kinds/step-rules.js';

/** The log entry of a child instance the parent's end leaves running: its runner stops it. */
export const CHILD_STOPPED = 'child.stopped';

/** Thrown inside the reducer when an event exceeds its transition budget. */
export class TransitionLimitError extends Error {}

/** Spends one unit of the per-event transition budget. */
export function spend(cx: Cx): void {
  cx.budget -= 1;
  if (cx.budget < 0) throw new TransitionLimitError('transition limit exceeded');
}

/** The definition of a step known to exist. */
export function stepDef(cx: Cx, id: string): StepDefinition & { id: string } {
  return cx.wf.definition.steps[id]!;
}

/** The definition of a task step known to exist. */
export function taskDef(cx: Cx, id: string): StepOf<'task'> & { id: string } {
  return cx.wf.definition.steps[id] as StepOf<'task'> & { id: string };
}

/** The state of a step known to have been entered. */
export function stepState(cx: Cx, id: string): StepState {
  return cx.s.steps[id]!;
}

/** Appends to the bounded transition log. */
export function log(
  cx: Cx,
  type: string,
  step?: string,
  extra?: { attempt?: number; detail?: string },
): void {
  const entry: Snapshot['log'][number] = { v: cx.s.version, at: cx.at, type };
  if (step !== undefined) entry.step = step;
  if (extra?.attempt !== undefined) entry.attempt = extra.attempt;
  if (extra?.detail !== undefined) entry.detail = extra.detail;
  // Collected and appended by the reducer once per event (see `appendLog`), which cuts the ring to
  // `limits.log`; the runner's hooks get every entry of the event, whatever that limit.
  if (cx.logged) cx.logged.push(entry);
  else cx.s.log.push(entry);
}

// A step's output stays readable while it is undone, so compensations can see what they undo.
const HAS_OUTPUT = new Set(['completed', 'compensating', 'compensated', 'compensation-dlq']);

/** The data conditions and mappings read: `{ input, outputs }` with outputs of completed steps. */
export function dataView(s: Snapshot): { input: unknown; outputs: Record<string, unknown> } {
  const outputs: Record<string, unknown> = {};
  const steps = s.steps;
  // Every choice and mapping builds one: a plain write is several times cheaper than a defined
  // property; only an id that is an accessor of Object.prototype needs the latter.
  for (const id in steps) {
    const st = steps[id]!;
    if (st.output === undefined || !HAS_OUTPUT.has(st.status)) continue;
    if (id === '__proto__') Object.defineProperty(outputs, id, { value: st.output, enumerable: true });
    else outputs[id] = st.output;
  }
  return { input: s.input, outputs };
}

/** Key of a task in `snapshot.tasks` (a map item's is `step[item]`). */
export function taskKey(step: string, phase: 'run' | 'compensate', item?: number): string {
  const base = item === undefined ? step : `${step}[${item}]`;
  return phase === 'run' ? base : `${base}:compensate`;
}

/** Marks a step finished with the given status and drops its cursor. */
export function finish(cx: Cx, id: string, status: StepState['status'], output?: unknown): void {
  const st = stepState(cx, id);
  st.status = status;
  st.finishedAt = cx.at;
  if (output !== undefined) st.output = output;
  const i = cx.s.active.indexOf(id);
  if (i >= 0) cx.s.active.splice(i, 1);
}

/** Records a completion (or a passed savepoint) for rollback; loops keep only the latest. */
export function pushCompleted(cx: Cx, entry: string): void {
  const i = cx.s.completed.indexOf(entry);
  if (i >= 0) cx.s.completed.splice(i, 1);
  cx.s.completed.push(entry);
}

/** Removes the timers of a step (of one phase, or all). */
export function clearTimers(cx: Cx, id: string, phase?: 'run' | 'compensate'): void {
  const keep = cx.s.timers.filter(
    (t) => t.step !== id || (phase !== undefined && (t.phase ?? 'run') !== phase),
  );
  if (keep.length !== cx.s.timers.length) cx.s.timers = keep;
}

/** Adds a durable timer. */
export function addTimer(cx: Cx, timer: TimerState): void {
  cx.s.timers.push(timer);
}

/**
 * Takes a step off the live path: its timers go, an in-flight handler is detached (its result
 * will only matter for rollback), anything else is marked skipped.
 */
export function deactivate(cx: Cx, id: string): void {
  clearTimers(cx, id, 'run');
  const task = cx.s.tasks[taskKey(id, 'run')];
  const i = cx.s.active.indexOf(id);
  if (i >= 0) cx.s.active.splice(i, 1);
  if (cx.s.steps[id]?.map) {
    detachItems(cx, id);
    const st = stepState(cx, id);
    st.status = 'skipped';
    st.finishedAt = cx.at;
  } else if (task) detach(cx, task);
  else {
    const st = stepState(cx, id);
    st.status = 'skipped';
    st.finishedAt = cx.at;
  }
}

/**
 * A map's items in flight are detached (compensated if they still complete); those waiting to retry
 * stop, and count as failed: they never completed, so nothing undoes them.
 */
export function detachItems(cx: Cx, id: string): void {
  clearTimers(cx, id, 'run');
  const map = stepState(cx, id).map!;
  map.running = map.running.filter((item) => {
    const t = cx.s.tasks[taskKey(id, 'run', item)];
    if (t) detach(cx, t);
    // Waiting to retry, it never completed: not one to undo.
    else map.failed.push(item);
    return t !== undefined;
  });
}

/**
 * A detached task's result only matters for rollback. A child's is dispatched again by this
 * version: its writer runs the child effect once more, which now cancels the child.
 */
function detach(cx: Cx, task: TaskState): void {
  task.detached = true;
  if (task.child !== undefined) task.dispatchVersion = cx.s.version;
}

/** What a task runs besides its step and phase: a map item, a child instance, a handler of its own. */
export interface TaskExtra {
  item?: number | undefined;
  child?: string | undefined;
  /** The handler to call (default: the task step's `handler`, or `compensate` for that phase). */
  handler?: string | undefined;
}

/** Records a handler attempt as dispatched: whoever writes this version runs it. */
export function dispatchTask(
  cx: Cx,
  id: string,
  phase: 'run' | 'compensate',
  attempt: number,
  extra?: TaskExtra,
): void {
  const def = taskDef(cx, id);
  const st = stepState(cx, id);
  const item = extra?.item;
  // A map item's run attempts are its own (its items' compensations go one at a time, counted on the step).
  if (phase === 'compensate') st.compensation = { ...st.compensation, attempt };
  else if (item === undefined) st.attempt = attempt;
  const key = `${cx.s.id}/${cx.s.run}/${id}/${st.iteration}`;
  const task: TaskState = {
    step: id,
    phase,
    attempt,
    idempotencyKey: item === undefined ? key : `${key}/${item}`,
    handler: extra?.handler ?? (phase === 'run' ? def.handler : def.compensate!),
    dispatchedAt: cx.at,
    // A queued task is due at once: the tick of whichever worker takes it starts its deadline.
    deadline: cx.handoff ? cx.at : cx.at + taskTimeout(cx, def),
    dispatchVersion: cx.s.version,
  };
  // Its writer runs it now: it holds a lease its runner renews (a queued task's taker sets one), or
  // with `heartbeatMs` its handler, whose heartbeats alone then keep it.
  const beat = extra?.child === undefined ? def.heartbeatMs : undefined;
  if (!cx.handoff && extra?.child === undefined) task.leaseUntil = cx.at + (beat ?? leaseMs(cx));
  if (beat !== undefined) task.heartbeatMs = beat;
  if (item !== undefined) task.item = item;
  if (extra?.child !== undefined) task.child = extra.child;
  if (cx.handoff) task.queued = true;
  cx.table.limits?.dispatched(cx, def, task);
  cx.s.tasks[taskKey(id, phase, item)] = task;
  log(
    cx,
    phase === 'run' ? 'task.dispatched' : 'compensation.dispatched',
    id,
    item === undefined ? { attempt } : { attempt, detail: `item ${item}` },
  );
}

/** How long an attempt of the step may run before it counts as lost. */
function taskTimeout(cx: Cx, def: { timeoutMs?: number | undefined }): number {
  return def.timeoutMs ?? cx.wf.definition.defaults?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
}

/**
 * A worker's tick takes a queued task: same attempt and key, a real deadline from now, and
 * dispatched by this version, so the tick's writer is the one that runs it.
 */
export function takeTask(cx: Cx, key: string, task: TaskState): void {
  const { queued: _, ...rest } = task;
  const taken: TaskState = {
    ...rest,
    deadline: cx.at + taskTimeout(cx, taskDef(cx, task.step)),
    dispatchVersion: cx.s.version,
  };
  if (leased(taken)) taken.leaseUntil = cx.at + attemptLeaseMs(cx, taken);
  cx.s.tasks[key] = taken;
  log(cx, 'task.taken', task.step, { attempt: task.attempt });
}

/**
 * A task its runner gives back unstarted (a worker stopping): queued again, due at once, same
 * attempt and key, so any worker takes it now instead of waiting out its deadline.
 */
export function releaseTask(cx: Cx, key: string, task: TaskState): void {
  const releases = (task.releases ?? 0) + 1;
  // Queued, it runs nowhere: no lease until a worker takes it.
  const { leaseUntil: _, ...rest } = task;
  cx.s.tasks[key] = { ...rest, queued: true, deadline: cx.at, dispatchVersion: cx.s.version, releases };
  log(cx, 'task.released', task.step, { attempt: task.attempt });
}

/** Ends the instance in a terminal status, dropping every live path, task and timer. */
export function terminate(cx: Cx, status: 'completed' | 'failed' | 'cancelled' | 'aborted'): void {
  // Children still running are stopped with it (aborted with an abort, else cancelled): the runner
  // that writes this reads these entries.
  for (const key in cx.s.tasks) {
    const t = cx.s.tasks[key]!;
    if (t.child !== undefined && t.phase === 'run') log(cx, CHILD_STOPPED, t.step, { detail: t.child });
  }
  cx.s.status = status;
  cx.s.active = [];
  cx.s.tasks = {};
  cx.s.timers = [];
  delete cx.s.saga;
  log(cx, `workflow.${status}`);
}

/** An error as stored, with the step it came from. */
export function stepError(error: ErrorInfo, step: string): ErrorInfo {
  const out: ErrorInfo = { message: error.message, step };
  if (error.code !== undefined) out.code = error.code;
  if (error.retryable !== undefined) out.retryable = error.retryable;
  return out;
}
