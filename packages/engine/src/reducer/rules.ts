import type { CompiledWorkflow } from '../definition/compile.js';
import { patchInput } from '../definition/input-patch.js';
import { kindOf } from '../definition/kinds/index.js';
import { InboxOverflowError, PastPivotError, UnknownSignalError } from '../errors.js';
import { type EventOf, rejectEvent, type WorkflowEvent } from '../events.js';
import { isTerminal, type StepState } from '../snapshot.js';
import { dispatchCompensation, passedPivot, pumpRollback, startRollback } from './compensation.js';
import { rulesOf } from './kind-table.js';
import type { LimitEvent, ResultEvent } from './kinds/step-rules.js';
import { checkDetails, keepDetails } from './task-heartbeat.js';
import { attemptLeaseMs, renews } from './task-lease.js';
import { fire, nextDue } from './timers.js';
import {
  type Cx,
  DEFAULT_INBOX_LIMIT,
  log,
  releaseTask,
  spend,
  stepDef,
  stepError,
  TransitionLimitError,
  taskKey,
  terminate,
} from './transition-context.js';

/**
 * Throws `UNKNOWN_SIGNAL` for a signal name no step of the definition listens for (unless it
 * accepts unknown signals): before anything is written, and alike for an active or finished instance.
 */
export function refuseUnknownSignal(wf: CompiledWorkflow, id: string, name: string): void {
  if (!wf.signals.has(name) && wf.definition.acceptUnknownSignals !== true) {
    throw new UnknownSignalError(id, name, [...wf.signals]);
  }
}

/** What a rule returns when the event does not apply: the reducer hands back the same snapshot. */
export const NOOP = Symbol('noop');
/** A rule's result: {@link NOOP}, or undefined once it has changed the draft. */
export type Outcome = typeof NOOP | undefined;

/** A rule of one event type. */
export type Rule<T extends WorkflowEvent['type']> = (cx: Cx, ev: EventOf<T>) => Outcome;

/**
 * The rule for every event type of the core, in one place (flow limits' events have theirs in
 * `LimitRules.rules`). A rule returns NOOP before touching the snapshot it is given (the
 * reducer's plain copy, or a deep copy).
 */
export const rules: { [T in Exclude<WorkflowEvent['type'], LimitEvent>]: Rule<T> } = {
  start: () => NOOP,

  'task.completed': (cx, ev) => handlerResult(cx, ev),

  'task.failed': (cx, ev) => handlerResult(cx, ev),

  'task.released': (cx, ev) => {
    const key = taskKey(ev.step, ev.phase ?? 'run', ev.item);
    const task = cx.s.tasks[key];
    // Only the attempt handed out, not yet given back: a stale release changes nothing.
    if (
      !task ||
      task.queued ||
      task.attempt !== ev.attempt ||
      (ev.key !== undefined && ev.key !== task.idempotencyKey)
    )
      return NOOP;
    return run(cx, () => releaseTask(cx, key, task));
  },

  // The attempt's runner (or its handler, for a step with `heartbeatMs`) still runs it: its lease
  // moves on, and its details are kept. Not logged: a long handler renews every few seconds, and
  // the log ring (the last few transitions) would hold nothing else.
  'task.heartbeat': (cx, ev) => {
    checkDetails(ev);
    const key = taskKey(ev.step, ev.phase ?? 'run', ev.item);
    const task = cx.s.tasks[key];
    if (!task || !renews(cx, task, ev)) return NOOP;
    return run(cx, () => {
      const until = Math.max(task.leaseUntil!, cx.at + attemptLeaseMs(cx, task));
      cx.s.tasks[key] = { ...task, leaseUntil: until };
      if (ev.details !== undefined) keepDetails(cx, task, ev.details);
    });
  },

  'child.ended': (cx, ev) => {
    if (!Object.hasOwn(cx.wf.definition.steps, ev.step)) rejectEvent(`unknown step "${ev.step}"`, 'step');
    const def = stepDef(cx, ev.step);
    const rules = rulesOf(cx, def).childEnded;
    if (!rules) rejectEvent(`step "${ev.step}" is a ${def.kind}, which starts no child`, 'step');
    const task = rules.match(cx, def, ev);
    if (!task) return NOOP;
    return run(cx, () => rules.apply(cx, def, task, ev, cx.table.flow));
  },

  // Only a completed child instance is reverted (for its parent's rollback); once is enough.
  revert: (cx, ev) => {
    if (cx.s.status !== 'completed' || !cx.s.parent) return NOOP;
    const pivot = passedPivot(cx);
    if (pivot !== undefined) throw new PastPivotError(cx.s.id, pivot);
    return run(cx, () => {
      if (ev.reason !== undefined) cx.s.reason = ev.reason;
      // Reopened for the rollback; the end it reaches now answers the parent's compensation.
      cx.s.status = 'running';
      cx.s.parent = { ...cx.s.parent!, phase: 'compensate' };
      delete cx.s.output;
      log(cx, 'workflow.revert-requested');
      startRollback(cx, 'cancel');
    });
  },

  tick: (cx) => {
    const limits = cx.table.limits;
    if (nextDue(cx) === null && !limits?.waiting(cx)) return NOOP;
    return run(cx, () => {
      limits?.retryAll(cx);
      fireDue(cx);
    });
  },

  signal: (cx, ev) => {
    refuseUnknownSignal(cx.wf, cx.s.id, ev.name);
    return run(cx, () => {
      // Timers that fell due before the signal fire first, as a tick on time would have done: a
      // late signal starts the next batch or finds the timeout taken, whatever the driver's lag.
      fireDue(cx, 'timers');
      if (isTerminal(cx.s.status)) return;
      const listener = cx.s.active.find((id) => {
        const def = stepDef(cx, id);
        return kindOf(def).listensFor?.(def) === ev.name;
      });
      // Throwing here discards the draft: nothing is written.
      if (
        listener === undefined &&
        cx.s.inbox.length >= (cx.wf.definition.limits?.inbox ?? DEFAULT_INBOX_LIMIT)
      ) {
        throw new InboxOverflowError(cx.s.id, cx.wf.definition.limits?.inbox ?? DEFAULT_INBOX_LIMIT);
      }
      if (listener !== undefined) {
        const def = stepDef(cx, listener);
        rulesOf(cx, def).checkSignal?.(cx, def, ev);
      }
      if (ev.id !== undefined) {
        // Appended once the event is applied (see `reduce`), as a new frozen ring: the draft never
        // copies the ring.
        cx.seenId = ev.id;
      }
      const record = {
        name: ev.name,
        payload: ev.payload ?? null,
        at: cx.at,
        ...(ev.id ? { id: ev.id } : {}),
      };
      if (listener !== undefined) cx.table.flow.deliverSignal(cx, listener, record);
      else {
        cx.s.inbox.push(record);
        log(cx, 'signal.buffered', undefined, { detail: ev.name });
      }
    });
  },

  cancel: (cx, ev) => {
    if (cx.s.saga?.mode === 'cancel') return NOOP;
    // Past a completed pivot nothing rolls back: refused, nothing written (abort still stops it).
    const pivot = passedPivot(cx);
    if (pivot !== undefined) throw new PastPivotError(cx.s.id, pivot);
    return run(cx, () => {
      if (ev.reason !== undefined) cx.s.reason = ev.reason;
      log(
        cx,
        'workflow.cancel-requested',
        undefined,
        ev.reason === undefined ? undefined : { detail: ev.reason },
      );
      startRollback(cx, 'cancel');
    });
  },

  abort: (cx, ev) =>
    run(cx, () => {
      if (ev.reason !== undefined) cx.s.reason = ev.reason;
      terminate(cx, 'aborted');
    }),

  requeue: (cx, ev) => {
    if (ev.step !== undefined && !Object.hasOwn(cx.wf.definition.steps, ev.step))
      rejectEvent(`unknown step "${ev.step}"`, 'step');
    const parked = Object.entries(cx.s.steps).filter(
      ([id, st]) =>
        (st.status === 'dlq' || st.status === 'compensation-dlq') &&
        (ev.step === undefined || ev.step === id),
    );
    if (parked.length === 0) return NOOP;
    return run(cx, () => {
      if (ev.inputPatch) cx.s.input = patchInput(cx.s.input, ev.inputPatch);
      for (const [id, st] of parked) requeueStep(cx, id, st);
      // The instance error keeps naming a step that is still parked.
      const still = Object.entries(cx.s.steps).find(([, st]) => st.status === 'dlq' && st.error);
      if (still) cx.s.error = stepError(still[1].error!, still[0]);
      pumpRollback(cx);
    });
  },
};

/** Runs a transition (the reducer derives status and wake time afterwards); a runaway fails the instance. */
export function run(cx: Cx, body: () => void, bump = true): undefined {
  if (bump) {
    cx.s.version += 1;
    cx.s.updatedAt = cx.at;
  }
  try {
    body();
    cx.table.limits?.settle(cx);
  } catch (e) {
    if (!(e instanceof TransitionLimitError)) throw e;
    cx.s.error = { message: 'too many transitions in one event (a runaway loop?)', code: 'TRANSITION_LIMIT' };
    terminate(cx, 'failed');
  }
  return undefined;
}

/** Fires timers (and, unless `timers` only, task deadlines) due at the event time, earliest first. */
function fireDue(cx: Cx, only?: 'timers'): void {
  for (let due = nextDue(cx, only); due !== null; due = nextDue(cx, only)) {
    spend(cx);
    fire(cx, due);
  }
}

function requeueStep(cx: Cx, id: string, st: StepState): void {
  log(cx, 'step.requeued', id);
  if (st.status === 'compensation-dlq') {
    st.status = 'compensating';
    const attempt = st.compensation?.attempt ?? 0;
    st.compensation = { attempt, attemptBase: attempt };
    delete cx.s.compensationError;
    dispatchCompensation(cx, id, attempt + 1);
    return;
  }
  delete cx.s.error;
  const def = stepDef(cx, id);
  const requeue = rulesOf(cx, def).requeue;
  if (requeue) requeue(cx, def, st, cx.table.flow);
  else cx.table.flow.enter(cx, id);
}

/** A handler's result: the step's kind finds the task it answers (none: a stale result) and applies it. */
function handlerResult(cx: Cx, ev: ResultEvent): Outcome {
  if (!Object.hasOwn(cx.wf.definition.steps, ev.step)) rejectEvent(`unknown step "${ev.step}"`, 'step');
  const def = stepDef(cx, ev.step);
  const rules = rulesOf(cx, def).result;
  if (!rules) rejectEvent(`step "${ev.step}" is a ${def.kind}, which runs no handler`, 'step');
  const task = rules.match(cx, def, ev);
  if (!task) return NOOP;
  return run(cx, () => rules.apply(cx, def, task, ev, cx.table.flow));
}
