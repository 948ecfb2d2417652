import type { CompiledWorkflow } from '../definition/compile.js';
import { readPath } from '../definition/data-path.js';
import { limitIssues } from '../definition/flow-limit-checks.js';
import type { StepLimits } from '../definition/flow-limits.js';
import { ValidationError } from '../errors.js';
import { type EventOf, parseEvent, rejectEvent } from '../events.js';
import { parseFlowEvent } from '../flow-events.js';
import type { FlowNeed } from '../flow-need.js';
import {
  type ErrorInfo,
  isFairKey,
  isPriority,
  isTerminal,
  MAX_FAIR_KEY_LENGTH,
  MAX_PRIORITY,
  type Snapshot,
  type TaskState,
  type TimerState,
} from '../snapshot.js';
import { keyText, resolveNeeds, workflowNeeds } from './flow-needs.js';
import { rulesOf } from './kind-table.js';
import type { LimitRules } from './kinds/step-rules.js';
import { NOOP, type Outcome, run } from './rules.js';
import { freezeNew } from './snapshot-copy.js';
import {
  addTimer,
  type Cx,
  dataView,
  dispatchTask,
  log,
  stepDef,
  taskKey,
  terminate,
} from './transition-context.js';

// Flow limits in the reducer: an attempt the store would not let start waits (`task.throttled`),
// an instance not admitted yet waits before its first step (`instance.throttled`), and any tick
// tries them again. The reducer never counts: the runner asks the store and reports a refusal.

/** What the rules below return for an event that does not apply (stale), else the change to run. */
export type Change = false | (() => void);
const STALE = false;

/**
 * `task.throttled`: the attempt in flight did not start. Its task goes (the attempt is not
 * consumed), the step shows what it waits for, and a `throttle` timer retries it at `until` at the
 * latest. False when the event names no attempt in flight (stale: nothing changes).
 */
export function throttleTask(cx: Cx, ev: EventOf<'task.throttled'>): Change {
  if (!Object.hasOwn(cx.wf.definition.steps, ev.step)) rejectEvent(`unknown step "${ev.step}"`, 'step');
  const phase = ev.phase ?? 'run';
  const key = taskKey(ev.step, phase, ev.item);
  const task = cx.s.tasks[key];
  if (!task || task.attempt !== ev.attempt || task.needs === undefined || task.queued) return STALE;
  if (ev.key !== undefined && ev.key !== task.idempotencyKey) return STALE;
  return () => {
    delete cx.s.tasks[key];
    const st = cx.s.steps[ev.step]!;
    const waiting = {
      need: ev.need,
      until: ev.until,
      since: task.waitingSince ?? cx.at,
      attempt: task.attempt,
      ...(task.item === undefined ? {} : { item: task.item }),
    };
    cx.s.steps[ev.step] = { ...st, throttled: waiting };
    const timer: TimerState = {
      kind: 'throttle',
      step: ev.step,
      at: ev.until,
      phase,
      attempt: task.attempt,
      dispatchVersion: task.dispatchVersion,
      need: ev.need,
    };
    if (task.item !== undefined) timer.item = task.item;
    addTimer(cx, timer);
    const item = task.item === undefined ? '' : `item ${task.item}: `;
    log(cx, 'task.throttled', ev.step, { attempt: task.attempt, detail: `${item}${needText(ev.need)}` });
  };
}

/** A need in the log: its scope, key and limit. */
function needText(need: EventOf<'task.throttled'>['need']): string {
  const per = need.periodMs === undefined ? '' : ` per ${need.periodMs} ms`;
  return `${need.scope} ${JSON.stringify(need.key)} limit ${need.limit}${per}`;
}

/**
 * A `throttle` timer fired (on time, or early: any tick fires them): the same attempt is
 * dispatched again, needs and all, unless its step moved on meanwhile.
 */
export function retryThrottled(cx: Cx, timer: TimerState): void {
  const st = cx.s.steps[timer.step];
  const def = stepDef(cx, timer.step);
  const item = timer.item;
  if (st?.status !== 'active' || timer.attempt === undefined) return;
  if (item !== undefined && !st.map?.running.includes(item)) return;
  const waited = st.throttled?.item === item ? st.throttled : undefined;
  const since = waited?.since;
  if (waited) {
    const { throttled: _, ...rest } = st;
    cx.s.steps[timer.step] = rest;
  }
  const phase = timer.phase ?? 'run';
  const extra = item === undefined ? undefined : { item, handler: (def as { handler?: string }).handler };
  dispatchTask(cx, timer.step, phase, timer.attempt, extra);
  const key = taskKey(timer.step, phase, item);
  const task = cx.s.tasks[key];
  if (task && since !== undefined) cx.s.tasks[key] = { ...task, waitingSince: since };
}

/** Whether a tick has flow work: a throttled attempt or admission to try again. */
export function hasThrottled(cx: Cx): boolean {
  if (cx.s.admission?.throttled) return true;
  for (const t of cx.s.timers) if (t.kind === 'throttle') return true;
  return false;
}

/**
 * What a tick does before the due timers: every throttled attempt is dispatched again and a
 * throttled admission asked for again, whatever their `until` (a released slot ticks its waiters
 * early; `until` is only the latest time).
 */
export function retryAllThrottled(cx: Cx): void {
  const admission = cx.s.admission;
  if (admission?.throttled) {
    cx.s.admission = { needs: admission.needs, waitingSince: admission.throttled.since };
    log(cx, 'instance.admission-retried');
  }
  if (!cx.s.timers.some((t) => t.kind === 'throttle')) return;
  const fired = cx.s.timers.filter((t) => t.kind === 'throttle');
  cx.s.timers = cx.s.timers.filter((t) => t.kind !== 'throttle');
  for (const t of fired) {
    log(cx, 'timer.fired', t.step, { detail: t.kind });
    retryThrottled(cx, t);
  }
}

/**
 * A new run's start: with instance limits, the instance waits for admission (no step entered)
 * and the runner asks the store; a key that holds no key value fails it. Returns whether the
 * start step may be entered now.
 */
export function admit(cx: Cx): boolean {
  const priority = cx.s.priority ?? priorityOf(cx.wf.definition.priority, cx.s.input);
  if (priority) cx.s.priority = priority;
  else delete cx.s.priority;
  const fair = fairKeyOf(cx.wf.definition.fairness, cx.s.input);
  if (typeof fair === 'object') {
    cx.s.error = fair;
    terminate(cx, 'failed');
    return false;
  }
  if (fair === undefined) delete cx.s.fairKey;
  else cx.s.fairKey = fair;
  const needs = workflowNeeds(cx.wf.definition, cx.s.input);
  if (needs === undefined) return true;
  if (!Array.isArray(needs)) {
    cx.s.error = { message: needs.message, code: needs.code, retryable: false };
    terminate(cx, 'failed');
    return false;
  }
  cx.s.admission = { needs };
  log(cx, 'instance.admission-pending');
  return false;
}

/**
 * The run's fairness key (the value at `fairness.key` in its input, as text) that the store's due
 * order takes turns by; undefined without fairness or for an empty value; `INVALID_FLOW_KEY` when
 * the path holds no string, finite number or boolean, or a text too long to index.
 */
function fairKeyOf(fairness: { key: string } | undefined, input: unknown): string | undefined | ErrorInfo {
  if (fairness === undefined) return undefined;
  const v = readPath({ input }, fairness.key);
  const key = keyText(v);
  const length = key?.length;
  if (key !== undefined && isFairKey(key)) return key === '' ? undefined : key;
  return {
    message: `fairness key ${fairness.key} must hold a string (at most ${MAX_FAIR_KEY_LENGTH} characters), a finite number or a boolean; found ${
      length === undefined ? (v === undefined ? 'nothing' : typeof v) : `${length} characters`
    }`,
    code: 'INVALID_FLOW_KEY',
    retryable: false,
  };
}

/**
 * The run's priority from its workflow's `priority` (a number, or an `input.` path to one), when
 * the start gave none; `INVALID_INPUT` thrown (the start is refused, nothing written) when the path
 * holds anything but an integer from 0 to {@link MAX_PRIORITY}.
 */
function priorityOf(priority: number | string | undefined, input: unknown): number | undefined {
  if (typeof priority !== 'string') return priority;
  const v = readPath({ input }, priority);
  if (v === undefined || isPriority(v)) return v;
  throw new ValidationError('INVALID_INPUT', `invalid priority at ${priority}`, [
    { path: priority, message: `must be an integer from 0 to ${MAX_PRIORITY}; found ${found(v)}` },
  ]);
}

/** A value in a message: a scalar as JSON (cut short), else what it is. */
const found = (v: unknown) =>
  typeof v === 'object' ? (v === null ? 'null' : 'an object') : JSON.stringify(v).slice(0, 60);

/** `instance.throttled`: the admission waits (retried at `until` at the latest). False when none is pending. */
export function throttleAdmission(cx: Cx, ev: EventOf<'instance.throttled'>): Change {
  const admission = cx.s.admission;
  if (!admission || admission.throttled) return STALE;
  return () => {
    const since = admission.waitingSince ?? cx.at;
    cx.s.admission = { needs: admission.needs, throttled: { need: ev.need, until: ev.until, since } };
    log(cx, 'instance.throttled', undefined, { detail: needText(ev.need) });
  };
}

/** `instance.admitted`: the store granted the admission; its limits are held and the start step entered. */
export function admitted(cx: Cx): Change {
  const admission = cx.s.admission;
  if (!admission) return STALE;
  return () => {
    delete cx.s.admission;
    cx.s.holds = admission.needs;
    log(cx, 'instance.admitted');
    cx.table.flow.enter(cx, cx.wf.definition.start);
  };
}

/**
 * Attempts dispatched with a key that holds no key value fail for good (`INVALID_FLOW_KEY`), as
 * their kind fails a result: after the rule that dispatched them, so no kind meets a failure in
 * the middle of its own dispatching.
 */
export function failBadKeys(cx: Cx): void {
  const bad = cx.badKeys;
  while (bad?.length) {
    const { key, error } = bad.shift()!;
    const task = cx.s.tasks[key];
    if (!task) continue;
    const def = stepDef(cx, task.step);
    const result = rulesOf(cx, def).result;
    if (!result) continue;
    const ev: EventOf<'task.failed'> = {
      type: 'task.failed',
      at: cx.at,
      step: task.step,
      attempt: task.attempt,
      error,
      ...(task.item === undefined ? {} : { item: task.item }),
    };
    result.apply(cx, def, task, ev, cx.table.flow);
  }
}

/** The flow limits an attempt of a step (or of one map item) of `s` needs, resolved from its data now. */
function attemptNeeds(
  s: Snapshot,
  workflow: string,
  def: StepLimits & { id: string; items?: string | undefined },
  item: number | undefined,
): ReturnType<typeof resolveNeeds> {
  if (def.concurrency === undefined && def.rateLimit === undefined) return undefined;
  const view: Record<string, unknown> = dataView(s);
  if (item !== undefined && def.items !== undefined) {
    const items = readPath(view, def.items);
    view['item'] = Array.isArray(items) ? items[item] : undefined;
    view['index'] = item;
  }
  return resolveNeeds(def, `${workflow}/${def.id}`, view);
}

/** A flow event's change run as a transition, or NOOP when it does not apply. */
function change(cx: Cx, c: Change): Outcome {
  return c === false ? NOOP : run(cx, c);
}

/**
 * After `derive`: a throttled admission is retried at its `until` at the latest (a released slot
 * ticks it sooner), so it counts in `wakeAt`; what flow control changed in `s`, a new version of
 * the frozen `base`, is frozen.
 */
function derived(s: Snapshot, base: Snapshot): void {
  const admitAt = s.admission?.throttled?.until;
  if (admitAt !== undefined && (s.wakeAt === null || admitAt < s.wakeAt)) s.wakeAt = admitAt;
  if (s.admission !== base.admission) freezeNew(s.admission);
  if (s.holds !== base.holds) freezeNew(s.holds);
  for (const id in s.steps) {
    const t = s.steps[id]!.throttled;
    if (t !== base.steps[id]?.throttled) freezeNew(t);
  }
  for (const key in s.tasks) freezeNew(s.tasks[key]!.needs);
}

/**
 * What no longer waits stops showing it: a step whose throttled attempt has no retry timer left
 * (it finished, was skipped or stopped), the admission of an instance that ended.
 */
function clearWaits(cx: Cx): void {
  const s = cx.s;
  if (s.admission && isTerminal(s.status)) delete s.admission;
  for (const id in s.steps) {
    const st = s.steps[id]!;
    if (st.throttled && !s.timers.some((t) => t.kind === 'throttle' && t.step === id)) {
      const { throttled: _, ...rest } = st;
      s.steps[id] = rest;
    }
  }
}

/**
 * A handler's run attempt was dispatched: what its step's limits need goes on it, resolved from the
 * data now; a key that holds no key value fails it once the rule that dispatched it is done.
 */
function dispatched(cx: Cx, def: { id: string }, task: TaskState): void {
  // Only run attempts of a handler are limited: compensations undo, and must not wait behind runs.
  if (task.phase !== 'run' || task.child !== undefined) return;
  const needs = attemptNeeds(cx.s, cx.wf.definition.name, def, task.item);
  if (Array.isArray(needs)) task.needs = needs;
  else if (needs !== undefined) {
    cx.badKeys ??= [];
    cx.badKeys.push({ key: taskKey(task.step, task.phase, task.item), error: needs });
  }
}

/**
 * The straight path's dispatch (see {@link LimitRules.straight}): on a snapshot with no throttled
 * attempt (none has a `throttle` timer, so no step shows a wait) and no admission asked, the needs of
 * the run attempt of `def` (none: the instance ends), frozen as `derived` freezes them.
 */
function straight(
  wf: CompiledWorkflow,
  s: Snapshot,
  steps: Snapshot['steps'],
  def: (StepLimits & { id: string }) | undefined,
): FlowNeed[] | null | undefined {
  if (s.admission !== undefined) return undefined;
  for (let i = 0; i < s.timers.length; i++) if (s.timers[i]!.kind === 'throttle') return undefined;
  if (def === undefined) return null;
  const needs = attemptNeeds({ input: s.input, steps } as Snapshot, wf.definition.name, def, undefined);
  if (needs === undefined) return null;
  if (!Array.isArray(needs)) return undefined;
  freezeNew(needs);
  return needs;
}

/** The reducer's rules of flow limits: what `flowControl` brings to a reduction's table. */
export const LIMIT_RULES: LimitRules = {
  check: (wf) => {
    const issues = limitIssues(wf);
    if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);
  },
  dispatched,
  straight,
  derived,
  settle: (cx) => {
    failBadKeys(cx);
    clearWaits(cx);
  },
  admit,
  waiting: hasThrottled,
  retryAll: retryAllThrottled,
  retry: (cx, _, timer) => retryThrottled(cx, timer),
  parse: (event) => parseFlowEvent(event) ?? parseEvent(event),
  rules: {
    'task.throttled': (cx, ev) => change(cx, throttleTask(cx, ev)),
    'instance.throttled': (cx, ev) => change(cx, throttleAdmission(cx, ev)),
    'instance.admitted': (cx) => change(cx, admitted(cx)),
  },
};
