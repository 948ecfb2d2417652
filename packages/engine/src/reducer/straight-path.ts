import type { CompiledWorkflow } from '../definition/compile.js';
import type { StepOf } from '../definition/schema.js';
import type { EventOf } from '../events.js';
import type { LogEntry, Snapshot, StepState, TaskState } from '../snapshot.js';
import { DEFAULT_TIMEOUT_MS } from './retry-policy.js';
import { copySnapshot, freezeNew } from './snapshot-copy.js';
import { DEFAULT_TASK_LEASE_MS, taskDue } from './task-lease.js';

// The commonest event of all, a task's handler done with the next step another task, built
// straight into the next snapshot. The general path (a draft of the snapshot, the kind's rules,
// a second copy, then walks that derive the status and freeze what changed) spends most of its
// time on bookkeeping this one case does not need; the result is the same, key for key, in the
// same order (the plain-path property test holds it to the deep-copy reference).

type TaskDef = StepOf<'task'> & { id: string };

/**
 * `ev` applied to a snapshot this module produced (deeply frozen, well formed), when it is the
 * `run` result of the task in flight of a task step, on a running instance with no rollback, and
 * the step's `next` is a task step, or it has none and ends the workflow (outside any parallel
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
  const next = def.next;
  const nextDef = next === undefined ? undefined : (steps[next] as TaskDef);
  if (nextDef) {
    if (nextDef.kind !== 'task') return undefined;
  } else {
    // Inside a parallel branch the branch ends, not the workflow; another task would be stopped.
    if ((wf.regions.get(id)?.length ?? 0) > 0) return undefined;
    for (const key in s.tasks) if (key !== id) return undefined;
  }

  const version = s.version + 1;
  const done = completedState(st, at, ev.output ?? null);
  Object.freeze(done);
  if (done.output !== st.output) freezeNew(done.output);
  const stepsOut = { ...s.steps };
  stepsOut[id] = done;
  log.push({ v: version, at, type: 'step.completed', step: id, attempt: task.attempt });
  const out = copySnapshot(s, nextDef ? s.output : done.output);
  out.version = version;
  out.steps = stepsOut;
  out.updatedAt = at;
  const completed = without(s.completed, id);
  completed.push(id);
  out.completed = Object.freeze(completed) as string[];

  if (!nextDef || next === undefined) {
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

  const iteration = (stepsOut[next]?.iteration ?? 0) + 1;
  stepsOut[next] = Object.freeze({ status: 'active', iteration, attempt: 1, startedAt: at });
  Object.freeze(stepsOut);
  const handoff = ev.handoff === true;
  const timeout = nextDef.timeoutMs ?? wf.definition.defaults?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dispatched: TaskState = {
    step: next,
    phase: 'run',
    attempt: 1,
    idempotencyKey: `${s.id}/${s.run}/${next}/${iteration}`,
    handler: nextDef.handler,
    dispatchedAt: at,
    deadline: handoff ? at : at + timeout,
    dispatchVersion: version,
  };
  // As `dispatchTask` leaves it: run now, it holds a lease; queued, its taker gives it one.
  const beat = nextDef.heartbeatMs;
  if (!handoff) dispatched.leaseUntil = at + (beat ?? leaseMs);
  if (beat !== undefined) dispatched.heartbeatMs = beat;
  if (handoff) dispatched.queued = true;
  Object.freeze(dispatched);
  // The other tasks in their order, then the new one (as a delete and an add would leave them;
  // a delete is slow, and most often there is no other task).
  const tasks: Snapshot['tasks'] = {};
  for (const key in s.tasks) if (key !== id) tasks[key] = s.tasks[key]!;
  tasks[next] = dispatched;
  out.tasks = Object.freeze(tasks);
  const active = without(s.active, id);
  active.push(next);
  out.active = Object.freeze(active) as string[];
  log.push(
    { v: version, at, type: 'step.started', step: next },
    { v: version, at, type: 'task.dispatched', step: next, attempt: 1 },
  );
  // What `derive` would find: no step parked (the instance was running), a task in flight.
  let wakeAt: number | null = null;
  for (const t of s.timers) if (wakeAt === null || t.at < wakeAt) wakeAt = t.at;
  for (const key in tasks) {
    const d = taskDue(tasks[key]!);
    if (wakeAt === null || d < wakeAt) wakeAt = d;
  }
  out.wakeAt = wakeAt;
  return out;
}

/** A copy of `list` without the first `id` in it (as an `indexOf` and a `splice` would leave it). */
function without(list: readonly string[], id: string): string[] {
  const out: string[] = [];
  let found = false;
  for (const x of list) {
    if (x === id && !found) found = true;
    else out.push(x);
  }
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
