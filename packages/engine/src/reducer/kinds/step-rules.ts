import type { CompiledWorkflow } from '../../definition/compile.js';
import type { StepDefinition, WorkflowDefinition } from '../../definition/schema.js';
import type { EventOf, WorkflowEvent } from '../../events.js';
import type { FlowNeed } from '../../flow-need.js';
import type { SearchValue } from '../../search.js';
import type {
  ErrorInfo,
  LogEntry,
  SignalRecord,
  Snapshot,
  StepState,
  TaskState,
  TimerState,
} from '../../snapshot.js';

/** Everything a transition needs: the workflow, the snapshot being written, the event time. */
export interface Cx {
  wf: CompiledWorkflow;
  /** The kinds' rules this reduction runs with, and the flow over them. */
  table: RuleTable;
  s: Snapshot;
  at: number;
  budget: number;
  /** Signal id this event adds to `seenSignals`; the reducer appends it once the draft is finished. */
  seenId?: string | undefined;
  /** Transitions of this event; the reducer appends them to the log ring once the draft is finished. */
  logged?: LogEntry[] | undefined;
  /** The event's writer will not run the tasks it dispatches: they are queued for a worker to take. */
  handoff?: boolean | undefined;
  /**
   * Attempts dispatched with a flow key that holds no key value (by task key): each fails for good
   * with `INVALID_FLOW_KEY` once the rule that dispatched it is done (see `run`).
   */
  badKeys?: Array<{ key: string; error: ErrorInfo }> | undefined;
  /** Lease of an attempt that starts running, ms (`StepOptions.leaseMs`; see `task-lease.ts`). */
  leaseMs?: number | undefined;
}

/** Step kinds by name, as the flow reads them: the definition layer's facts or the reducer's rules. */
export type ByKind<T> = { readonly [kind: string]: T };

/** The rules one reduction runs with: the core kinds' and those of the sets passed, and the flow over them. */
export interface RuleTable {
  readonly rules: ByKind<StepRules<never>>;
  readonly flow: Flow;
  /** The rules of flow limits, when a set brings them (`flowControl`); none: no limit is ever resolved. */
  readonly limits?: LimitRules | undefined;
  /** The rules of search attributes, when a set brings them (`searchAttributes`); none: no value is kept. */
  readonly search?: SearchRules | undefined;
}

/**
 * Search attributes as a kind set brings them (`searchAttributes`): the reducer keeps
 * `Snapshot.search` with them, and a harness checks what handlers set (a runner's side is the
 * set's `taskWrapper`).
 */
export interface SearchRules {
  /** Throws `INVALID_DEFINITION` for declarations wrong past the shape the core parses. */
  check(wf: CompiledWorkflow): void;
  /**
   * Brings `next.search` up to date after an event that changed the snapshot, with what a handler
   * `set` (`INVALID_SEARCH_ATTRIBUTE` when wrong; `INVALID_SNAPSHOT` when the search it had is not
   * attribute values).
   */
  update(wf: CompiledWorkflow, next: Snapshot, set?: Readonly<Record<string, SearchValue | null>>): void;
  /** What `ctx.setAttributes` keeps: `values` checked against the declarations (`INVALID_SEARCH_ATTRIBUTE`). */
  set(definition: WorkflowDefinition, values: unknown): Record<string, SearchValue | null>;
}

/** The events only flow limits produce (a runner's refusal or grant), each answered by {@link LimitRules}. */
export type LimitEvent = 'task.throttled' | 'instance.throttled' | 'instance.admitted';

/**
 * The reducer's side of flow limits, as a kind set brings it (`flowControl`): the core calls each
 * hook where limits matter, and a table without them runs none of this.
 */
export interface LimitRules {
  /** Throws `INVALID_DEFINITION` for a definition's flow control that is wrong past the shape the core parses. */
  check(wf: CompiledWorkflow): void;
  /** An attempt was just dispatched as `task`: what a handler's run attempt needs goes on it. */
  dispatched(cx: Cx, def: { id: string }, task: TaskState): void;
  /**
   * The straight path's `dispatched` (`completeTask`, which builds the next snapshot without a
   * draft): what the run attempt of task step `def` of `wf` dispatched on `s` (a snapshot the
   * reducer made, its step states now `steps`) needs, frozen; null when it needs nothing (or, with
   * no `def`, the instance ends); undefined when the general path must take the event (a key that
   * holds no key value, or anything a transition's `settle` or `derived` would change: a throttled
   * attempt or admission).
   */
  straight(
    wf: CompiledWorkflow,
    s: Snapshot,
    steps: Snapshot['steps'],
    def: (StepDefinition & { id: string }) | undefined,
  ): FlowNeed[] | null | undefined;
  /**
   * After a transition's body: attempts whose limit key held no key value fail for good, and what
   * no longer waits (a step moved on, an instance ended) stops showing it waited.
   */
  settle(cx: Cx): void;
  /**
   * After `derive` of `s`, a new version of the frozen `base`: a throttled admission counts in its
   * `wakeAt`, and what flow control changed is frozen (see `freezeChanged`).
   */
  derived(s: Snapshot, base: Snapshot): void;
  /** A new run's start: whether the start step may be entered now (else it waits for admission). */
  admit(cx: Cx): boolean;
  /** Whether a tick has flow work: a throttled attempt or admission. */
  waiting(cx: Cx): boolean;
  /** A tick, before the due timers: every throttled attempt and admission is tried again. */
  retryAll(cx: Cx): void;
  /** A `throttle` timer fired (for the step `def`): its attempt is dispatched again. */
  retry(cx: Cx, def: unknown, timer: TimerState): void;
  /** `parseEvent`, flow events included (`INVALID_EVENT` when malformed). */
  parse(event: unknown): WorkflowEvent;
  /** The flow events' rules, as the core's `rules` (NOOP when the event does not apply). */
  readonly rules: { readonly [T in LimitEvent]: (cx: Cx, ev: EventOf<T>) => symbol | undefined };
}

/** A handler's result event. */
export type ResultEvent = EventOf<'task.completed'> | EventOf<'task.failed'>;

/**
 * How cursors move, whatever the kind: what `flow.ts` implements once and hands to every rule
 * below as its last argument. A kind's module calls back into the core through it rather than by
 * importing `flow.ts`, which dispatches to the kinds: so no kind module and the core import each
 * other, and a kind's rules can run against any table of kinds (see `createFlow`).
 */
export interface Flow {
  /** Puts a cursor on a step, runs its kind's entry rule, and hands it any buffered signal it listens for. */
  enter(cx: Cx, id: string): void;
  /** A step completes with `output` (none: it keeps the one it has) and moves on to `next` or ends its path. */
  complete(cx: Cx, id: string, output?: unknown): void;
  /** A path ran out of steps: the workflow completes, or the step that forked its branch hears of it. */
  endPath(cx: Cx, id: string, output: unknown): void;
  /** Delivers one signal to the active step listening for it. */
  deliverSignal(cx: Cx, id: string, sig: SignalRecord): void;
}

/**
 * What the reducer does with one step kind, in one place: on entry, on a signal, a timer, a
 * handler's result, a lost attempt, a requeue, and when one of the branches it forks ends. The
 * core (flow, timers, compensation, rules) calls these through the table in `kinds/index.ts` and
 * owns what all kinds share: cursors, finishing, the log, timers and rollback. Every rule that may
 * move a cursor gets the {@link Flow} last; a rule that does not need it leaves it off.
 */
export interface StepRules<D> {
  /** The cursor reached the step: its state is fresh and `step.started` is logged. */
  enter(cx: Cx, def: D, flow: Flow): void;
  /** Rejects a live signal the step cannot use, before anything is written. */
  checkSignal?(cx: Cx, def: D, ev: EventOf<'signal'>): void;
  /** On entry, after the buffered signals it listens for were handed to it, the step is still active. */
  entered?(cx: Cx, def: D, flow: Flow): void;
  /** A signal the step listens for reached it while active (live, or from the inbox). */
  signal?(cx: Cx, def: D, sig: SignalRecord, flow: Flow): void;
  /** One of the step's timers fired (it is already removed and logged). */
  timer?(cx: Cx, def: D, timer: TimerState, flow: Flow): void;
  /** Handler results: `match` finds the task a result is for (null: stale, ignore it). */
  result?: {
    match(cx: Cx, def: D, ev: ResultEvent): TaskState | null;
    apply(cx: Cx, def: D, task: TaskState, ev: ResultEvent, flow: Flow): void;
  };
  /** A child instance the step started ended: `match` finds the task it answers (null: stale). */
  childEnded?: {
    match(cx: Cx, def: D, ev: EventOf<'child.ended'>): TaskState | null;
    apply(cx: Cx, def: D, task: TaskState, ev: EventOf<'child.ended'>, flow: Flow): void;
  };
  /** An attempt of the step missed its deadline (its task is already removed). */
  lost?(cx: Cx, def: D, task: TaskState, flow: Flow): void;
  /**
   * Dispatches the step's next compensation at `attempt` (`retry`: a retry of the same one); false
   * when nothing is left to undo (the rule marked the step compensated). Without this rule: one
   * compensation task running the kind's compensator.
   */
  compensate?(cx: Cx, def: D, attempt: number, retry: boolean): boolean;
  /** The step, parked in dlq, is requeued; without this rule it is entered again. */
  requeue?(cx: Cx, def: D, st: StepState, flow: Flow): void;
  /** A branch this step forked ran out of steps with `output`. */
  branchEnded?(cx: Cx, def: D, branch: number, output: unknown, flow: Flow): void;
}
