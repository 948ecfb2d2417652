import { enableArrayMethods, freeze, Immer } from 'immer';
import { pumpRollback, startRollback } from './compensation.js';
import {
  type Cx,
  DEFAULT_INBOX_LIMIT,
  DEFAULT_LOG_LIMIT,
  DEFAULT_MAX_TRANSITIONS,
  DEFAULT_SIGNAL_ID_LIMIT,
  dispatchTask,
  log,
  spend,
  stepDef,
  stepError,
  TransitionLimitError,
  terminate,
} from './context.js';
import type { DefinitionInput, WorkflowDefinition } from './definition-schema.js';
import { InboxOverflowError } from './errors.js';
import { type EventOf, parseEvent, rejectEvent, type WorkflowEvent } from './events.js';
import { deliverSignal, enter, humanDecision, listensFor } from './flow.js';
import { isTerminal, type LogEntry, type Snapshot, type Status, type StepState } from './snapshot.js';
import { checkSnapshot, initialSnapshot } from './snapshot-check.js';
import { applyResult, matchResult } from './task-results.js';
import { fire, nextDue } from './timers.js';
import { type CompiledWorkflow, compileWorkflow } from './workflow.js';

/** Tuning for {@link step}. */
export interface StepOptions {
  /** Internal transitions one event may cause before the instance fails (default 1000). */
  maxTransitions?: number;
}

// Our own instance, so the library never changes immer settings an application relies on.
const immer = new Immer({ autoFreeze: true });
// Array methods on drafts (push, indexOf, splice, filter...) run on the underlying array instead of
// one proxy trap per element (pnpm bench reducer: about 1.5x). A plugin, so it also applies to other
// users of this copy of immer; its one caveat, callbacks of filter/find/some seeing plain elements
// rather than drafts, does not matter here: no callback in the reducer mutates what it is given.
enableArrayMethods();

const NOOP = Symbol('noop');
type Outcome = typeof NOOP | undefined;

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
    Object.assign(s, derived(s), { log: appendLog(wf, s.log, cx.logged!) });
    return freeze(s, true);
  }
  checkSnapshot(wf, snapshot);
  if (isTerminal(snapshot.status)) return snapshot;
  // A signal id already seen: checked on the plain snapshot, not through a draft of the ring.
  if (ev.type === 'signal' && ev.id !== undefined && snapshot.seenSignals.includes(ev.id)) return snapshot;
  let outcome: Outcome;
  let seenId: string | undefined;
  const logged: LogEntry[] = [];
  const next = immer.produce(snapshot, (draft) => {
    const cx: Cx = { wf, s: draft, at: Math.max(ev.at, snapshot.updatedAt), budget, logged };
    outcome = rules[ev.type](cx, ev as never);
    seenId = cx.seenId;
  });
  if (outcome === NOOP) return snapshot;
  // Status and wake time are derived from the finished snapshot, not from the draft: reading every
  // step and task through the draft would create (and then finalize) a proxy for each of them.
  // The two rings (log, seen ids) are appended here too, as frozen arrays immer never walks.
  const patch: Partial<Snapshot> = derived(next);
  if (logged.length) patch.log = appendLog(wf, next.log, logged);
  const id = seenId as string | undefined; // assigned inside the recipe, which TS cannot see
  if (id !== undefined) {
    const seen = next.seenSignals;
    const limit = wf.definition.limits?.signalIds ?? DEFAULT_SIGNAL_ID_LIMIT;
    patch.seenSignals = ring(seen, [id], limit);
  }
  return Object.freeze({ ...next, ...patch });
}

/** The log ring with this event's transitions appended, cut to `limits.log`; frozen. */
function appendLog(wf: CompiledWorkflow, log: readonly LogEntry[], fresh: LogEntry[]): LogEntry[] {
  for (const e of fresh) Object.freeze(e);
  return ring(log, fresh, wf.definition.limits?.log ?? DEFAULT_LOG_LIMIT);
}

/**
 * `base` then `fresh`, keeping the last `limit`, as a new frozen array. Filled by index into a
 * preallocated array: V8 freezes a slice or spread of a frozen array several times slower.
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
  return Object.freeze(out) as T[];
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

type Rule<T extends WorkflowEvent['type']> = (cx: Cx, ev: EventOf<T>) => Outcome;

/** The rule for every event type, in one place. A rule returns NOOP before touching the draft. */
const rules: { [T in WorkflowEvent['type']]: Rule<T> } = {
  start: () => NOOP,

  'task.completed': (cx, ev) => {
    const task = matchResult(cx, ev);
    if (!task) return NOOP;
    return run(cx, () => applyResult(cx, task, ev));
  },

  'task.failed': (cx, ev) => {
    const task = matchResult(cx, ev);
    if (!task) return NOOP;
    return run(cx, () => applyResult(cx, task, ev));
  },

  tick: (cx) => {
    if (nextDue(cx) === null) return NOOP;
    return run(cx, () => fireDue(cx));
  },

  signal: (cx, ev) => {
    return run(cx, () => {
      // Timers that fell due before the signal fire first, as a tick on time would have done: a
      // late signal starts the next batch or finds the timeout taken, whatever the driver's lag.
      fireDue(cx, 'timers');
      if (isTerminal(cx.s.status)) return;
      const listener = cx.s.active.find((id) => listensFor(stepDef(cx, id)) === ev.name);
      // Throwing here discards the draft: nothing is written.
      if (
        listener === undefined &&
        cx.s.inbox.length >= (cx.wf.definition.limits?.inbox ?? DEFAULT_INBOX_LIMIT)
      ) {
        throw new InboxOverflowError(cx.s.id, cx.wf.definition.limits?.inbox ?? DEFAULT_INBOX_LIMIT);
      }
      if (
        listener !== undefined &&
        stepDef(cx, listener).kind === 'human' &&
        humanDecision(ev.payload) === undefined
      ) {
        rejectEvent(
          `signal "${ev.name}" for human step "${listener}" needs { decision: "approve" | "reject" }`,
          'payload',
        );
      }
      if (ev.id !== undefined) {
        // Recorded after the draft is finished (see `step`): copying the id ring through immer costs
        // a proxy-tracked copy, a reference set and a freeze of every id on every signal.
        cx.seenId = ev.id;
      }
      const record = {
        name: ev.name,
        payload: ev.payload ?? null,
        at: cx.at,
        ...(ev.id ? { id: ev.id } : {}),
      };
      if (listener !== undefined) deliverSignal(cx, listener, record);
      else {
        cx.s.inbox.push(record);
        log(cx, 'signal.buffered', undefined, { detail: ev.name });
      }
    });
  },

  cancel: (cx, ev) => {
    if (cx.s.saga?.mode === 'cancel') return NOOP;
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
    if (ev.step !== undefined && !cx.wf.definition.steps[ev.step])
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

/** Runs a transition (status and wake time are derived afterwards, by `derived`); a runaway fails the instance. */
function run(cx: Cx, body: () => void, bump = true): undefined {
  if (bump) {
    cx.s.version += 1;
    cx.s.updatedAt = cx.at;
  }
  try {
    body();
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

/** Status and `wakeAt` as the rest of a (plain, not draft) snapshot implies them. */
function derived(s: Snapshot): { status: Status; wakeAt: number | null } {
  let wakeAt: number | null = null;
  for (const t of s.timers) if (wakeAt === null || t.at < wakeAt) wakeAt = t.at;
  const tasks = Object.values(s.tasks);
  for (const t of tasks) if (wakeAt === null || t.deadline < wakeAt) wakeAt = t.deadline;
  if (isTerminal(s.status)) return { status: s.status, wakeAt };
  const steps = Object.values(s.steps);
  let status: Status;
  if (s.saga) status = steps.some((st) => st.status === 'compensation-dlq') ? 'dlq' : 'compensating';
  else if (steps.some((st) => st.status === 'dlq')) status = 'dlq';
  else status = tasks.some((t) => !t.detached) ? 'running' : 'waiting';
  return { status, wakeAt };
}

function requeueStep(cx: Cx, id: string, st: StepState): void {
  log(cx, 'step.requeued', id);
  if (st.status === 'compensation-dlq') {
    st.status = 'compensating';
    const attempt = st.compensation?.attempt ?? 0;
    st.compensation = { attempt, attemptBase: attempt };
    delete cx.s.compensationError;
    dispatchTask(cx, id, 'compensate', attempt + 1);
    return;
  }
  delete cx.s.error;
  if (stepDef(cx, id).kind !== 'task') {
    enter(cx, id);
    return;
  }
  st.status = 'active';
  delete st.error;
  delete st.finishedAt;
  st.attemptBase = st.attempt;
  cx.s.active.push(id);
  dispatchTask(cx, id, 'run', st.attempt + 1);
}

function patchInput(input: unknown, patch: Record<string, unknown>): unknown {
  const out: Record<string, unknown> = {};
  const base = typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
  for (const [k, v] of [...Object.entries(base), ...Object.entries(patch)]) {
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
