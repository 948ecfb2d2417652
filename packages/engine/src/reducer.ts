import { freeze, Immer } from 'immer';
import { failStep, pumpRollback, startRollback } from './compensation.js';
import {
  type Cx,
  DEFAULT_INBOX_LIMIT,
  DEFAULT_MAX_TRANSITIONS,
  dispatchTask,
  finish,
  log,
  SEEN_SIGNAL_LIMIT,
  spend,
  stepDef,
  TransitionLimitError,
  terminate,
} from './context.js';
import type { DefinitionInput, WorkflowDefinition } from './definition-schema.js';
import { InboxOverflowError, RegistryError, ValidationError } from './errors.js';
import { type EventOf, parseEvent, rejectEvent, type WorkflowEvent } from './events.js';
import { advance, closeBatch, deliverSignal, enter, humanDecision, listensFor } from './flow.js';
import { isTerminal, SNAPSHOT_SCHEMA_VERSION, type Snapshot, type StepState } from './snapshot.js';
import { applyResult, attemptFailed, matchResult } from './task-results.js';
import { compileWorkflow } from './workflow.js';

/** Tuning for {@link step}. */
export interface StepOptions {
  /** Internal transitions one event may cause before the instance fails (default 1000). */
  maxTransitions?: number;
}

// Our own instance, so the library never changes immer settings an application relies on.
const immer = new Immer({ autoFreeze: true });

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
    const cx: Cx = { wf, s, at: ev.at, budget };
    log(cx, 'workflow.started');
    run(cx, () => enter(cx, wf.definition.start), false);
    return freeze(s, true);
  }
  checkSnapshot(wf, snapshot);
  if (isTerminal(snapshot.status)) return snapshot;
  let outcome: Outcome;
  const next = immer.produce(snapshot, (draft) => {
    const cx: Cx = { wf, s: draft, at: Math.max(ev.at, snapshot.updatedAt), budget };
    outcome = rules[ev.type](cx, ev as never);
  });
  return outcome === NOOP ? snapshot : next;
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
    return run(cx, () => {
      for (let due = nextDue(cx); due !== null; due = nextDue(cx)) {
        spend(cx);
        fire(cx, due);
      }
    });
  },

  signal: (cx, ev) => {
    if (ev.id !== undefined && cx.s.seenSignals.includes(ev.id)) return NOOP;
    const listener = cx.s.active.find((id) => listensFor(stepDef(cx, id)) === ev.name);
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
    return run(cx, () => {
      if (ev.id !== undefined) {
        cx.s.seenSignals.push(ev.id);
        if (cx.s.seenSignals.length > SEEN_SIGNAL_LIMIT) cx.s.seenSignals.shift();
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
      pumpRollback(cx);
    });
  },
};

/** Runs a transition and then recomputes status and wake time; a runaway fails the instance. */
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
  settle(cx);
  return undefined;
}

/** Derives status and `wakeAt` from the rest of the snapshot. */
function settle(cx: Cx): void {
  const s = cx.s;
  let wake: number | null = null;
  for (const t of s.timers) if (wake === null || t.at < wake) wake = t.at;
  const tasks = Object.values(s.tasks);
  for (const t of tasks) if (wake === null || t.deadline < wake) wake = t.deadline;
  s.wakeAt = wake;
  if (isTerminal(s.status)) return;
  const steps = Object.values(s.steps);
  if (s.saga) s.status = steps.some((st) => st.status === 'compensation-dlq') ? 'dlq' : 'compensating';
  else if (steps.some((st) => st.status === 'dlq')) s.status = 'dlq';
  else s.status = tasks.some((t) => !t.detached) ? 'running' : 'waiting';
}

type Due = { kind: 'timer'; index: number } | { kind: 'deadline'; key: string };

/** The earliest timer or task deadline due at the event time, or null. */
function nextDue(cx: Cx): Due | null {
  let best: Due | null = null;
  let bestAt = Number.POSITIVE_INFINITY;
  cx.s.timers.forEach((t, index) => {
    if (t.at <= cx.at && t.at < bestAt) {
      best = { kind: 'timer', index };
      bestAt = t.at;
    }
  });
  for (const [key, t] of Object.entries(cx.s.tasks)) {
    if (t.deadline <= cx.at && t.deadline < bestAt) {
      best = { kind: 'deadline', key };
      bestAt = t.deadline;
    }
  }
  return best;
}

function fire(cx: Cx, due: Due): void {
  if (due.kind === 'deadline') {
    const task = cx.s.tasks[due.key]!;
    delete cx.s.tasks[due.key];
    attemptFailed(
      cx,
      task,
      { message: 'handler missed its deadline', code: 'TIMEOUT', retryable: true },
      true,
    );
    return;
  }
  const [timer] = cx.s.timers.splice(due.index, 1);
  const { step: id, kind } = timer!;
  log(cx, 'timer.fired', id, { detail: kind });
  const st = cx.s.steps[id]!;
  if (kind === 'retry') {
    const phase = timer!.phase ?? 'run';
    dispatchTask(cx, id, phase, (phase === 'run' ? st.attempt : (st.compensation?.attempt ?? 0)) + 1);
  } else if (kind === 'sleep') {
    finish(cx, id, 'completed');
    advance(cx, id);
  } else if (kind === 'idle' || kind === 'max-wait') {
    closeBatch(cx, id);
  } else timeout(cx, id);
}

/** A wait or human step timed out: take `onTimeout`, or fail. */
function timeout(cx: Cx, id: string): void {
  const def = stepDef(cx, id);
  const target = def.kind === 'wait' || def.kind === 'human' ? def.onTimeout : undefined;
  log(cx, 'step.timed-out', id);
  if (target === undefined) {
    failStep(cx, id, { message: `timed out waiting at ${id}`, code: 'TIMEOUT', retryable: false });
    return;
  }
  finish(cx, id, 'completed', { timedOut: true });
  enter(cx, target);
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

function initialSnapshot(
  wf: ReturnType<typeof compileWorkflow>,
  ev: EventOf<'start'>,
  previous: Snapshot | null,
): Snapshot {
  const { name, version } = wf.definition;
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    id: ev.id,
    workflow: { name, version, hash: wf.hash },
    version: previous ? previous.version + 1 : 1,
    run: 1,
    status: 'running',
    input: ev.input ?? null,
    steps: {},
    active: [],
    completed: [],
    tasks: {},
    timers: [],
    inbox: [],
    seenSignals: [],
    wakeAt: null,
    createdAt: ev.at,
    updatedAt: ev.at,
    log: [],
  };
}

const STATUSES = new Set([
  'running',
  'waiting',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'aborted',
  'dlq',
]);

/** Cheap structural check of a snapshot against the definition it is about to be stepped with. */
export function checkSnapshot(wf: ReturnType<typeof compileWorkflow>, s: Snapshot): void {
  const problems: Array<{ path: string; message: string }> = [];
  const bad = (path: string, message: string) => problems.push({ path, message });
  if (typeof s !== 'object' || s === null) bad('', 'snapshot must be an object');
  else {
    if (s.schemaVersion !== SNAPSHOT_SCHEMA_VERSION)
      bad('schemaVersion', `unsupported snapshot format ${String(s.schemaVersion)}`);
    if (typeof s.id !== 'string') bad('id', 'must be a string');
    if (!Number.isInteger(s.version) || s.version < 1) bad('version', 'must be a positive integer');
    if (!Number.isInteger(s.run) || s.run < 1) bad('run', 'must be a positive integer');
    if (!STATUSES.has(s.status)) bad('status', `unknown status ${String(s.status)}`);
    if (typeof s.updatedAt !== 'number' || s.updatedAt < 0) bad('updatedAt', 'must be a non-negative number');
    for (const k of ['steps', 'tasks'] as const) {
      if (typeof s[k] !== 'object' || s[k] === null || Array.isArray(s[k])) bad(k, 'must be an object');
    }
    for (const k of ['active', 'completed', 'timers', 'inbox', 'seenSignals', 'log'] as const) {
      if (!Array.isArray(s[k])) bad(k, 'must be an array');
    }
    if (typeof s.workflow !== 'object' || s.workflow === null) bad('workflow', 'must be an object');
    else if (s.workflow.name !== wf.definition.name || s.workflow.version !== wf.definition.version) {
      bad(
        'workflow',
        `snapshot runs ${s.workflow.name} v${s.workflow.version}, not ${wf.definition.name} v${wf.definition.version}`,
      );
    }
    if (problems.length === 0) {
      for (const id of Object.keys(s.steps)) {
        if (!Object.hasOwn(wf.definition.steps, id)) bad(`steps.${id}`, 'step is not in the definition');
      }
    }
  }
  if (problems.length) throw new ValidationError('INVALID_SNAPSHOT', 'invalid snapshot', problems);
  if (s.workflow.hash !== wf.hash) {
    throw new RegistryError(
      'DEFINITION_HASH_MISMATCH',
      `definition ${wf.definition.name} v${wf.definition.version} changed since instance ${s.id} started (hash ${s.workflow.hash.slice(0, 12)} vs ${wf.hash.slice(0, 12)}); register the change as a new version`,
    );
  }
}
