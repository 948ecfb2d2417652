import type { CompiledWorkflow } from '../definition/compile.js';
import { evaluateCondition } from '../definition/condition.js';
import { mapData } from '../definition/data-path.js';
import type { StepDefinition, StepOf } from '../definition/schema.js';
import type { EventOf } from '../events.js';
import type { LogEntry, Snapshot, StepState, TaskState } from '../snapshot.js';
import type { LimitRules } from './kinds/step-rules.js';
import { DEFAULT_TIMEOUT_MS } from './retry-policy.js';
import { copySnapshot, freezeNew } from './snapshot-copy.js';
import { DEFAULT_TASK_LEASE_MS, taskDue } from './task-lease.js';
import { dataView } from './transition-context.js';

// The commonest event of all, a task's handler done with the next step another task (perhaps
// through choice steps), or the end, built straight into the next snapshot. The general path (a
// draft of the snapshot, the kind's rules, a second copy, then walks that derive the status and
// freeze what changed) spends most of its time on bookkeeping this one case does not need; the
// result is the same, key for key, in the same order (the plain-path property test holds it to
// the deep-copy reference).

type TaskDef = StepOf<'task'> & { id: string };

const NONE: readonly string[] = [];

/** Where a completed task's `next` leads: the choice steps passed on the way, then the step reached. */
interface Route {
  choices: string[];
  to: string | undefined;
  toDef: (StepDefinition & { id: string }) | undefined;
}

/**
 * `ev` applied to a snapshot this module produced (deeply frozen, well formed), when it is the
 * `run` result of the task in flight of a task step, on a running instance with no rollback, and
 * the step's `next` leads (directly, or through choice steps whose branches hold) to a task step,
 * or ends the workflow: no `next`, or a `succeed` step with an output (outside any parallel
 * branch, no other task in flight). Undefined for anything else: the general path takes it.
 * `log` gets the event's transitions (new, not yet frozen); the caller appends them to the ring.
 */
export function completeTask(
  wf: CompiledWorkflow,
  s: Snapshot,
  ev: EventOf<'task.completed'>,
  at: number,
  budget: number,
  log: LogEntry[],
  leaseMs = DEFAULT_TASK_LEASE_MS,
  limits?: LimitRules,
): Snapshot | undefined {
  const steps = wf.definition.steps;
  const id = ev.step;
  if (s.status !== 'running' || s.saga || budget < 1 || ev.item !== undefined || ev.phase === 'compensate')
    return undefined;
  // No own-key checks: a name only the prototype has gives a function, which fails the checks.
  const def = steps[id] as TaskDef | undefined;
  const task = s.tasks[id];
  const st = s.steps[id];
  if (def?.kind !== 'task' || task?.attempt !== ev.attempt || typeof st !== 'object') return undefined;
  if (task.detached || task.phase !== 'run' || task.item !== undefined) return undefined;
  if (ev.key !== undefined && ev.key !== task.idempotencyKey) return undefined;

  const done = completedState(st, at, ev.output ?? null);
  // Copied key by key: V8 spreads a frozen object several times slower.
  const stepsOut: Snapshot['steps'] = {};
  for (const key in s.steps) stepsOut[key] = s.steps[key]!;
  stepsOut[id] = done;
  let next = def.next;
  let nextDef = next === undefined ? undefined : steps[next];
  let choices: readonly string[] = NONE;
  if (nextDef?.kind === 'choice') {
    const route = routeOf(wf, s.input, stepsOut, next, budget);
    if (!route) return undefined;
    ({ choices, to: next, toDef: nextDef } = route);
  }
  const ends = nextDef === undefined || nextDef.kind === 'succeed';
  if (nextDef && nextDef.kind !== 'task' && !ends) return undefined;
  let output: unknown = done.output;
  if (ends) {
    // Inside a parallel branch the branch ends, not the workflow; another task would be stopped.
    if ((wf.regions.get(next ?? id)?.length ?? 0) > 0) return undefined;
    for (const key in s.tasks) if (key !== id) return undefined;
    if (nextDef) {
      const out = (nextDef as StepOf<'succeed'>).output;
      // Without an output the workflow ends with none: the general path leaves that key out.
      output =
        out === undefined
          ? undefined
          : mapData(dataView({ input: s.input, steps: stepsOut } as Snapshot), out);
      if (output === undefined) return undefined;
    }
  }

  // With flow limits, an end that leaves nothing to settle (the next step's needs are asked below).
  if (limits && ends && limits.straight(wf, s, stepsOut, undefined) === undefined) return undefined;
  const version = s.version + 1;
  const logged = log.length;
  Object.freeze(done);
  if (done.output !== st.output) freezeNew(done.output);
  log.push({ v: version, at, type: 'step.completed', step: id, attempt: task.attempt });
  // A choice step is entered and completed at once; only its entry is logged.
  // Indexed loops over arrays here: V8 iterates a frozen array with for-of through an iterator object.
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i]!;
    stepsOut[c] = Object.freeze(passedState(stepsOut[c], at));
    log.push({ v: version, at, type: 'step.started', step: c });
  }
  const out = copySnapshot(s, ends ? output : s.output);
  out.version = version;
  out.steps = stepsOut;
  out.updatedAt = at;
  const completed = moved(s.completed, id, id);
  out.completed = Object.freeze(completed) as string[];

  if (ends || next === undefined) {
    if (next !== undefined) {
      freezeNew(output);
      // Written, not spread: a spread of a new object (and freezing the copy) costs ~20x more.
      const passed = passedState(stepsOut[next], at);
      passed.output = output;
      stepsOut[next] = Object.freeze(passed);
      log.push({ v: version, at, type: 'step.started', step: next });
    }
    log.push({ v: version, at, type: 'workflow.completed' });
    Object.freeze(stepsOut);
    out.status = 'completed';
    out.active = [];
    Object.freeze(out.active);
    out.tasks = Object.freeze({});
    if (s.timers.length) {
      out.timers = [];
      Object.freeze(out.timers);
    }
    out.wakeAt = null;
    return out;
  }
  const taskDef = nextDef as TaskDef;

  const iteration = (stepsOut[next]?.iteration ?? 0) + 1;
  stepsOut[next] = Object.freeze({ status: 'active', iteration, attempt: 1, startedAt: at });
  Object.freeze(stepsOut);
  const handoff = ev.handoff === true;
  const timeout = taskDef.timeoutMs ?? wf.definition.defaults?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dispatched: TaskState = {
    step: next,
    phase: 'run',
    attempt: 1,
    idempotencyKey: `${s.id}/${s.run}/${next}/${iteration}`,
    handler: taskDef.handler,
    dispatchedAt: at,
    deadline: handoff ? at : at + timeout,
    dispatchVersion: version,
  };
  // As `dispatchTask` leaves it: run now, it holds a lease; queued, its taker gives it one.
  const beat = taskDef.heartbeatMs;
  if (!handoff) dispatched.leaseUntil = at + (beat ?? leaseMs);
  if (beat !== undefined) dispatched.heartbeatMs = beat;
  if (handoff) dispatched.queued = true;
  if (limits) {
    // What the attempt needs, as the general path's dispatch resolves it; else that path takes it.
    const needs = limits.straight(wf, s, stepsOut, taskDef);
    if (needs === undefined) {
      log.length = logged;
      return undefined;
    }
    if (needs) dispatched.needs = needs;
  }
  Object.freeze(dispatched);
  // The other tasks in their order, then the new one (as a delete and an add would leave them;
  // a delete is slow, and most often there is no other task).
  const tasks: Snapshot['tasks'] = {};
  for (const key in s.tasks) if (key !== id) tasks[key] = s.tasks[key]!;
  tasks[next] = dispatched;
  out.tasks = Object.freeze(tasks);
  const active = moved(s.active, id, next);
  out.active = Object.freeze(active) as string[];
  log.push(
    { v: version, at, type: 'step.started', step: next },
    { v: version, at, type: 'task.dispatched', step: next, attempt: 1 },
  );
  // What `derive` would find: no step parked (the instance was running), a task in flight.
  let wakeAt: number | null = null;
  for (let i = 0; i < s.timers.length; i++) {
    const t = s.timers[i]!;
    if (wakeAt === null || t.at < wakeAt) wakeAt = t.at;
  }
  for (const key in tasks) {
    const d = taskDue(tasks[key]!);
    if (wakeAt === null || d < wakeAt) wakeAt = d;
  }
  out.wakeAt = wakeAt;
  return out;
}

/**
 * Follows `next` through choice steps (the first branch that holds, else `otherwise`) to the
 * step it reaches; undefined when a choice matches nothing (the step fails: the general path's
 * work) or the transition budget would run out on the way (each step entered spends one).
 */
function routeOf(
  wf: CompiledWorkflow,
  input: unknown,
  steps: Snapshot['steps'],
  next: string | undefined,
  budget: number,
): Route | undefined {
  const defs = wf.definition.steps;
  const choices: string[] = [];
  let to = next;
  let toDef = to === undefined ? undefined : defs[to];
  let data: ReturnType<typeof dataView> | undefined;
  while (toDef?.kind === 'choice') {
    if (choices.length + 1 >= budget) return undefined;
    // Choice steps leave no output: the data stays the same along the way.
    data ??= dataView({ input, steps } as Snapshot);
    const view = data;
    const picked = toDef.branches.find((b) => evaluateCondition(b.when, view))?.next ?? toDef.otherwise;
    if (picked === undefined) return undefined;
    choices.push(to!);
    to = picked;
    toDef = defs[to];
  }
  if (to !== undefined && choices.length + 1 > budget) return undefined;
  return { choices, to, toDef };
}

/** The state of a step entered and completed at `at` (a choice, a succeed), keys as the general path leaves them. */
function passedState(prev: StepState | undefined, at: number): StepState {
  return {
    status: 'completed',
    iteration: (prev?.iteration ?? 0) + 1,
    attempt: 0,
    startedAt: at,
    finishedAt: at,
  };
}

/**
 * A copy of `list` without the first `id` in it, with `add` at the end (as an `indexOf`, a `splice`
 * and a `push` would leave it), in an array of its final length: pushing onto an empty one
 * allocates room for sixteen, then copies.
 */
function moved(list: readonly string[], id: string, add: string): string[] {
  const at = list.indexOf(id);
  const n = at < 0 ? list.length : list.length - 1;
  const out = new Array<string>(n + 1);
  let k = 0;
  for (let i = 0; i < list.length; i++) if (i !== at) out[k++] = list[i]!;
  out[n] = add;
  return out;
}

/** The keys, in order, of a task step's state from its entry until its first attempt ends. */
const ENTERED = ['status', 'iteration', 'attempt', 'startedAt'];

/**
 * `st` completed at `at` with `output`, keys in the order the general path leaves them: spread
 * and written, or (for the usual state, which a spread of a frozen object copies slowly) built.
 */
function completedState(st: StepState, at: number, output: unknown): StepState {
  let i = 0;
  for (const key in st) if (key !== ENTERED[i++]) i = 99;
  if (i === 4) {
    return {
      status: 'completed',
      iteration: st.iteration,
      attempt: st.attempt,
      startedAt: st.startedAt,
      finishedAt: at,
      output,
    };
  }
  const done = { ...st };
  // The details were for a retry of this execution; none follows a completion.
  delete done.heartbeatDetails;
  done.status = 'completed';
  done.finishedAt = at;
  done.output = output;
  return done;
}
