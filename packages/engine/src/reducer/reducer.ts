import { type CompiledWorkflow, compileWorkflow } from '../definition/compile.js';
import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import { parseEvent, rejectEvent, type WorkflowEvent } from '../events.js';
import type { SearchValue } from '../search.js';
import { isTerminal, type LogEntry, type Snapshot } from '../snapshot.js';
import { kindTable } from './kind-sets.js';
import { assertKinds, type KindSet, kindNotLoaded } from './kind-table.js';
import type { LimitEvent, RuleTable } from './kinds/step-rules.js';
import { NOOP, refuseUnknownSignal, rules, run } from './rules.js';
import { checkSnapshot, initialSnapshot } from './snapshot-check.js';
import { copySnapshot, derive, freezeChanged, freezeNew, plainDraft, ring } from './snapshot-copy.js';
import { completeTask } from './straight-path.js';
import { DEFAULT_TASK_LEASE_MS } from './task-lease.js';
import {
  type Cx,
  DEFAULT_LOG_LIMIT,
  DEFAULT_MAX_TRANSITIONS,
  DEFAULT_SIGNAL_ID_LIMIT,
  log,
} from './transition-context.js';

/** Tuning for {@link step}. */
export interface StepOptions {
  /** Internal transitions one event may cause before the instance fails (default 1000). */
  maxTransitions?: number | undefined;
  /**
   * Step kinds beyond the core, as values (`[composition]` for child and map steps). A definition
   * using a kind no set here brings is refused with `KIND_NOT_LOADED`.
   */
  kinds?: readonly KindSet[] | undefined;
  /**
   * Lease of an attempt that starts running, ms (default 10 000): its `leaseUntil` is the event
   * time plus this, and a `task.heartbeat` moves it to the heartbeat's time plus this. An attempt
   * whose lease lapses is lost (`LEASE_LOST`) and retried, whatever its deadline. A runner passes
   * its `taskLeaseMs`.
   */
  leaseMs?: number | undefined;
}

/** {@link reduce}'s options: {@link StepOptions} and how the caller vouches for its snapshot. */
export interface ReduceOptions extends StepOptions {
  /** Run the event on a deep copy, the reference the plain path is tested against (default false). */
  reference?: boolean | undefined;
  /**
   * The caller vouches that the snapshot is one this function returned for this definition (the
   * runner holding many instances at once, beyond the ring of recent ones): it is not checked again.
   */
  trusted?: boolean | undefined;
}

/**
 * The last snapshots this module returned, each with the workflow it was stepped with (pairs, a
 * ring of four). Such a snapshot is deeply frozen and was well formed when it left, so stepping it
 * again skips the structural check and copies less. A WeakMap would remember all of them, but its
 * set costs a tenth of a step; a caller folding events hits this every time.
 */
const recent: unknown[] = new Array(8).fill(null);
let slot = 0;

function remember(s: Snapshot, wf: CompiledWorkflow): void {
  recent[slot] = s;
  recent[slot + 1] = wf;
  slot = (slot + 2) % 8;
}

function steppedWith(s: Snapshot): unknown {
  for (let i = 0; i < 8; i += 2) if (recent[i] === s) return recent[i + 1];
  return undefined;
}

/** What {@link reduce} returns: the next snapshot and the transitions this event recorded. */
export interface Reduction {
  /** The next snapshot; the input snapshot itself when the event did not apply. */
  snapshot: Snapshot;
  /** Every transition of this event, in order, even past `limits.log` (empty for a no-op). */
  transitions: readonly LogEntry[];
}

const UNCHANGED: readonly LogEntry[] = Object.freeze([]);

/**
 * The reducer: applies one event to a snapshot and returns the next snapshot. Pure and
 * deterministic; returns the same object when the event does not apply; throws a typed error
 * (and changes nothing) when the definition, event or snapshot is malformed. Time comes only from
 * the event's `at`; the handlers a snapshot asks for are listed in `snapshot.tasks`, never run here.
 *
 * @example
 * const order = workflow('order', 1).task('reserve', { handler: 'reserveStock' }).build();
 * let s = step(order, null, { type: 'start', at: 0, id: 'order-1', input: { sku: 'A' } });
 * s.tasks.reserve; // { handler: 'reserveStock', attempt: 1, ... }: someone should run it
 * s = step(order, s, { type: 'task.completed', at: 10, step: 'reserve', attempt: 1, output: { id: 'R' } });
 * s.status; // 'completed'
 */
export function step(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: StepOptions = {},
): Snapshot {
  return reduce(definition, snapshot, event, options).snapshot;
}

/** {@link step} with every event applied to a deep copy: the reference the plain path is tested against. */
export function referenceStep(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: StepOptions = {},
): Snapshot {
  return reduce(definition, snapshot, event, { ...options, reference: true }).snapshot;
}

/**
 * Folds events from nothing; the result equals the snapshot those events produced live.
 *
 * @example
 * const again = replay(order, harness.events);
 * expect(again).toEqual(harness.snapshot);
 */
export function replay(
  definition: DefinitionInput | WorkflowDefinition,
  events: readonly WorkflowEvent[],
  options?: StepOptions,
): Snapshot | null {
  let s: Snapshot | null = null;
  for (const e of events) s = step(definition, s, e, options);
  return s;
}

/**
 * {@link step} that also returns the transitions the event recorded: what the runner hands to its
 * hooks and observers.
 */
export function reduce(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot: Snapshot | null,
  event: WorkflowEvent,
  options: ReduceOptions = {},
): Reduction {
  const wf = compileWorkflow(definition);
  const table = kindTable(options.kinds);
  assertKinds(wf, table);
  const ev = (table.limits?.parse ?? parseEvent)(event);
  const budget = options.maxTransitions ?? DEFAULT_MAX_TRANSITIONS;
  const plain = options.reference !== true;
  const leaseMs = checkLease(options.leaseMs);
  if (snapshot === null || (ev.type === 'start' && ev.reuse && isTerminal(snapshot.status))) {
    if (ev.type !== 'start')
      rejectEvent(`no instance yet: the first event must be start, got ${ev.type}`, 'type');
    // A priority is flow control's to act on: without it, the run would not be taken first.
    if (ev.priority !== undefined && !table.limits) throw kindNotLoaded('limits', wf.definition.name);
    const s = initialSnapshot(wf, ev, snapshot);
    const cx: Cx = { wf, table, s, at: ev.at, budget, logged: [], handoff: ev.handoff === true, leaseMs };
    log(cx, 'workflow.started');
    run(
      cx,
      () => {
        if (!table.limits || table.limits.admit(cx)) table.flow.enter(cx, wf.definition.start);
      },
      false,
    );
    const out = copySnapshot(s);
    derive(out);
    table.search?.update(wf, out);
    out.log = appendLog(wf, s.log, cx.logged!);
    freezeNew(out);
    remember(out, wf);
    return { snapshot: out, transitions: cx.logged! };
  }
  const known = options.trusted === true || steppedWith(snapshot) === wf;
  const using: Run = { wf, table, budget, plain, leaseMs };
  if (known) return advance(using, snapshot, ev, true);
  checkSnapshot(wf, snapshot);
  try {
    return advance(using, snapshot, ev, false);
  } catch (e) {
    // The cheap check passed, but the parts contradict each other (a task of a step with no state,
    // a timer that is not one): the rules met the contradiction as a TypeError. The input is never
    // written to (see `advance`), so the snapshot is refused as a whole and nothing changed.
    if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
    throw new ValidationError('INVALID_SNAPSHOT', 'invalid snapshot', [{ path: '', message: e.message }]);
  }
}

/** What one reduction runs with: the workflow, the kinds' rules, the transition budget, the plain path or not. */
interface Run {
  wf: CompiledWorkflow;
  table: RuleTable;
  budget: number;
  plain: boolean;
  leaseMs: number;
}

/** A rule of some event type, as `advance` calls it. */
type AnyRule = (cx: Cx, ev: never) => unknown;

/** {@link reduce} past the checks: the event applied to a well-formed snapshot (`known`: one this module made). */
function advance(
  { wf, table, budget, plain, leaseMs }: Run,
  snapshot: Snapshot,
  ev: WorkflowEvent,
  known: boolean,
): Reduction {
  // A flow limits' event parsed only where their rules were passed (see `reduce`).
  const rule = ((rules as unknown as Record<string, AnyRule>)[ev.type] ??
    table.limits!.rules[ev.type as LimitEvent]) as AnyRule;
  // A signal id already seen: checked on the plain snapshot, not through a draft of the ring.
  if (ev.type === 'signal' && ev.id !== undefined && snapshot.seenSignals.includes(ev.id))
    return { snapshot, transitions: UNCHANGED };
  if (isTerminal(snapshot.status) && !(ev.type === 'revert' && snapshot.status === 'completed')) {
    // A finished instance takes no events, but a misnamed signal is still a caller's mistake.
    if (ev.type === 'signal') refuseUnknownSignal(wf, snapshot.id, ev.name);
    return { snapshot, transitions: UNCHANGED };
  }
  const at = Math.max(ev.at, snapshot.updatedAt);
  const logged: LogEntry[] = [];
  if (plain && known && ev.type === 'task.completed') {
    const next = completeTask(wf, snapshot, ev, at, budget, logged, leaseMs, table.limits);
    if (next) {
      table.search?.update(wf, next, ev.search);
      next.log = appendLog(wf, next.log, logged);
      Object.freeze(next);
      remember(next, wf);
      return { snapshot: next, transitions: logged };
    }
  }
  let cx: Cx | undefined;
  if (plain && !snapshot.saga && ev.type !== 'cancel' && ev.type !== 'requeue' && ev.type !== 'revert') {
    // The common events run on a plain copy of the parts they usually write (see `plainDraft`).
    // Every other object is shared with the input and frozen, so an event that reaches further
    // throws a TypeError at its first such write, before anything shared changed; a deep copy redoes it.
    cx = {
      wf,
      table,
      s: plainDraft(snapshot, known),
      at,
      budget,
      logged,
      handoff: ev.handoff === true,
      leaseMs,
    };
    try {
      if (rule(cx, ev as never) === NOOP) return { snapshot, transitions: UNCHANGED };
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
      cx = undefined;
      logged.length = 0;
    }
  }
  let next: Snapshot;
  if (cx) {
    // Copied once more so keys the event added (output, error, saga...) take their fixed place.
    next = copySnapshot(cx.s);
  } else {
    // The rare events (rollbacks, cancel, requeue) run on a deep copy: every object is writable,
    // and a rule that throws leaves the input untouched. Nothing is shared with the input any
    // more, so the result is frozen in full below.
    cx = {
      wf,
      table,
      s: structuredClone(snapshot),
      at,
      budget,
      logged,
      handoff: ev.handoff === true,
      leaseMs,
    };
    if (rule(cx, ev as never) === NOOP) return { snapshot, transitions: UNCHANGED };
    next = copySnapshot(cx.s);
    known = false;
  }
  // Status and wake time are derived from the finished snapshot, not while the event runs; the two
  // rings (log, seen ids) are appended here too, as new frozen arrays nothing above ever walks.
  derive(next);
  table.limits?.derived(next, snapshot);
  // Only a result event carries what a handler set.
  table.search?.update(wf, next, (ev as { search?: Record<string, SearchValue | null> }).search);
  if (logged.length) next.log = appendLog(wf, next.log, logged);
  const id = (cx as Cx | undefined)?.seenId;
  if (id !== undefined) {
    const limit = wf.definition.limits?.signalIds ?? DEFAULT_SIGNAL_ID_LIMIT;
    next.seenSignals = Object.freeze(ring(next.seenSignals, [id], limit)) as string[];
  }
  // Parts shared with a snapshot the reducer produced are deeply frozen already; one from outside
  // (or a deep copy) may hide unfrozen objects anywhere and is walked in full.
  if (known) freezeChanged(next, snapshot);
  else {
    for (const e of next.log) freezeNew(e);
    freezeNew(next);
  }
  remember(next, wf);
  return { snapshot: next, transitions: logged };
}

/** The log ring with this event's transitions appended, cut to `limits.log`; frozen. */
function appendLog(wf: CompiledWorkflow, log: readonly LogEntry[], fresh: LogEntry[]): LogEntry[] {
  for (const e of fresh) Object.freeze(e);
  return Object.freeze(ring(log, fresh, wf.definition.limits?.log ?? DEFAULT_LOG_LIMIT)) as LogEntry[];
}

/** The `leaseMs` option checked: a positive safe integer, else `INVALID_OPTIONS` (nothing reduced). */
function checkLease(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_TASK_LEASE_MS;
  if (Number.isSafeInteger(ms) && ms > 0) return ms;
  throw new ValidationError('INVALID_OPTIONS', 'invalid step options', [
    { path: 'leaseMs', message: `must be a positive integer (ms), got ${String(ms)}` },
  ]);
}
