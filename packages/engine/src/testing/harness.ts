import { compileWorkflow } from '../definition/compile.js';
import { declaredCheckOf, declaredProblem, declaredSchemas } from '../definition/declared-schemas.js';
import { inputPatchProblem } from '../definition/input-patch.js';
import { kindOf } from '../definition/kinds/index.js';
import type { SignalsOf, StepIdOf, TaskOutputsOf } from '../definition/typed-definition.js';
import { ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { type Reduction, reduce, replay, step } from '../reducer/reducer.js';
import { heartbeatDetails } from '../reducer/task-heartbeat.js';
import { taskDue } from '../reducer/task-lease.js';
import { taskView } from '../reducer/task-view.js';
import { taskKey } from '../reducer/transition-context.js';
import { touchesFlow } from '../runner/flow-changes.js';
import type { AnyDefinition, Handler, HandlersFor } from '../runner/handler-types.js';
import type { TypedSnapshot } from '../runner/types.js';
import {
  type ErrorInfo,
  isPriority,
  isTerminal,
  type LogEntry,
  MAX_PRIORITY,
  type Snapshot,
  type Status,
  type TaskState,
} from '../snapshot.js';
import { acquireSync, settleSync } from './harness-flow.js';
import { runTree, runTreeSync } from './harness-run.js';
import type {
  AwaitedSignal,
  ChildDefinitionOf,
  ChildRef,
  DispatchedTask,
  DispatchingStepOf,
  HarnessOptions,
  HarnessRequeueOptions,
  OutputRead,
  ReportedOutput,
  ReportOptions,
  SignalArgs,
  StartArgs,
  StreamedChunk,
  SyncHandlers,
} from './harness-types.js';
import { type ChildEffect, type EventInput, HarnessTree, type TreeMember } from './tree.js';

export type {
  AwaitedSignal,
  DispatchedTask,
  HarnessOptions,
  HarnessRequeueOptions,
  HarnessStartOptions,
  StreamedChunk,
  SyncHandlers,
} from './harness-types.js';
export type { ChildEffect, EventInput } from './tree.js';

/**
 * Drives a workflow instance through the pure reducer with a fake clock: no store, no promises.
 * Records every accepted event so a test can check that replay reproduces the state. Given the
 * child workflows, it drives the tree: children are instances of their own (`child`, `children`),
 * on the same clock, started, reported, cancelled and reverted as a runner does it.
 */
export class WorkflowHarness<
  D extends AnyDefinition = AnyDefinition,
  W extends readonly AnyDefinition[] = readonly AnyDefinition[],
> {
  readonly id: string;
  private current: Snapshot | null = null;
  /** Events that changed the snapshot, in order. */
  readonly events: WorkflowEvent[] = [];
  /** What handlers that `run` ran wrote to `ctx.stream`, in order (as JSON), with the task's stream key and attempt. */
  readonly streamed: StreamedChunk[] = [];
  private readonly shared: HarnessTree;
  private readonly options: HarnessOptions;

  /** Prefer {@link createHarness}; `tree` is the harness's own (a child joins its parent's). */
  constructor(
    readonly definition: D,
    options: HarnessOptions<W> = {},
    tree?: HarnessTree,
  ) {
    this.options = options;
    this.id = options.id ?? options.from?.id ?? 'test-1';
    this.current = options.from ?? null;
    // What a child's harness shares with this one: the transition budget, the kinds, the lease.
    const limits = { maxTransitions: options.maxTransitions, kinds: options.kinds, leaseMs: options.leaseMs };
    this.shared =
      tree ??
      new HarnessTree(
        HarnessTree.registryOf(definition, options.workflows, options.kinds),
        options.effects === 'manual',
        (def, id) => new WorkflowHarness(def, { id, ...limits }, this.shared),
        options.now ?? options.from?.updatedAt ?? 0,
      );
    // Its snapshot is a stored one typed by D: every harness is a member, though for a generic D
    // the compiler cannot relate the typed steps to the stored ones.
    this.shared.members.set(this.id, this as unknown as TreeMember);
  }

  /** Current fake time, epoch ms: one clock for every instance of the tree. */
  get now(): number {
    return this.shared.now;
  }
  set now(ms: number) {
    this.shared.now = ms;
  }

  /** This harness with string step ids, for results of tasks the snapshot itself dispatched. */
  private get untyped(): WorkflowHarness {
    return this as unknown as WorkflowHarness;
  }

  /** The snapshot, typed by the definition as a runner client's reads are; throws before `start`. */
  get snapshot(): TypedSnapshot<D> {
    return this.state as TypedSnapshot<D>;
  }

  /** The snapshot as stored, for reads by any step id; throws before `start`. */
  private get state(): Snapshot {
    if (!this.current) throw new Error('harness: start the workflow first');
    return this.current;
  }

  /** The instance status. */
  get status(): Status {
    return this.state.status;
  }

  /**
   * Applies any event (its `at` defaults to the fake clock); returns whether the snapshot changed.
   * A start's input, a signal's data (a human decision too) and a requeue's patched input are
   * checked against the declared schemas first, as a runner checks them: refused, it throws
   * `INVALID_INPUT` and applies nothing.
   */
  send(event: EventInput): boolean {
    this.checkDeclared(event);
    return this.write([event]);
  }

  /** Throws what a runner refuses the event's data with; a finished instance's signals are not checked, as there. */
  private checkDeclared(event: EventInput): void {
    if (event.type === 'signal' && this.current && isTerminal(this.current.status)) return;
    if (event.type === 'requeue') {
      const schema = declaredSchemas(this.definition)?.input;
      const problem =
        schema && event.inputPatch && this.current
          ? inputPatchProblem(schema, this.current.input, event.inputPatch)
          : undefined;
      if (problem) throw problem;
      return;
    }
    const check = declaredCheckOf(this.definition, event);
    const problem = check && declaredProblem(check.schema, check.value, check.at);
    if (problem) throw problem;
  }

  /**
   * Applies events as one write, as a runner writes a start and an abort together: the child
   * effects they ask for are worked out once, from the last snapshot. Whether any applied. The
   * events are applied as given, with no declared-schema check (`send` checks).
   */
  write(events: readonly EventInput[]): boolean {
    const before = this.current?.version ?? 0;
    const prev = this.current;
    const transitions: LogEntry[] = [];
    const apply = (full: WorkflowEvent) => {
      const r: Reduction = reduce(this.definition, this.current, full, this.options);
      if (r.snapshot === this.current) return;
      this.current = r.snapshot;
      this.events.push(full);
      transitions.push(...r.transitions);
    };
    for (const event of events) apply({ ...event, at: event.at ?? this.now } as WorkflowEvent);
    if (this.current === null || this.current.version === before) return false;
    // Flow limits, as a runner asks its store: acquired before the write stands, released after.
    const flow = this.shared.flow;
    if (touchesFlow(prev, this.current)) {
      acquireSync(flow, prev, this.current, this.now, (_, e) => {
        apply(e);
        return this.current!;
      });
    }
    const wake = touchesFlow(prev, this.current) ? settleSync(flow, prev, this.current, this.now) : [];
    this.shared.written(this.current, transitions, before);
    for (const id of wake) this.shared.members.get(id)?.write([{ type: 'tick' }]);
    return true;
  }

  /** Starts the instance with `input` (the declared input type of a typed definition) and `options.priority`. */
  start(...[input, options]: StartArgs<D>): this {
    const priority = options?.priority;
    if (priority !== undefined && !isPriority(priority))
      throw new ValidationError('INVALID_OPTIONS', 'invalid start options', [
        { path: 'priority', message: `must be an integer from 0 to ${MAX_PRIORITY}` },
      ]);
    this.send({ type: 'start', id: this.id, input, ...(priority === undefined ? {} : { priority }) });
    return this;
  }

  /** In-flight tasks that are not detached, optionally only those of one step. */
  dispatched(stepId?: DispatchingStepOf<D>): DispatchedTask<DispatchingStepOf<D>>[] {
    return Object.values(this.state.tasks)
      .filter((t) => !t.detached && (stepId === undefined || t.step === stepId))
      .map((t) => {
        const { input, iteration } = taskView(this.definition, this.state, t);
        return { ...t, step: t.step as DispatchingStepOf<D>, input, iteration };
      });
  }

  private task(stepId: string, phase: 'run' | 'compensate', item?: number): TaskState {
    const t = this.state.tasks[taskKey(stepId, phase, item)];
    const which = item === undefined ? '' : ` item ${item}`;
    if (!t) throw new Error(`harness: no ${phase} task in flight for step "${stepId}"${which}`);
    return t;
  }

  /**
   * Reports success of the in-flight attempt of `stepId` (or of the given attempt; pass `key`,
   * an idempotency key, to report for a specific execution as a runner does; `item` for a map's).
   */
  complete<K extends keyof TaskOutputsOf<D> & string>(
    stepId: K,
    output?: ReportedOutput<D, K>,
    o: ReportOptions = {},
  ): boolean {
    const phase = o.phase ?? 'run';
    const { attempt, key, item } = this.target(stepId, phase, o);
    const search = o.search === undefined ? {} : { search: o.search };
    return this.send({
      type: 'task.completed',
      step: stepId,
      attempt,
      phase,
      output,
      ...key,
      ...item,
      ...search,
    });
  }

  /** Reports failure of the in-flight attempt of `stepId` (or of the given attempt / `key` / `item`). */
  fail(
    stepId: keyof TaskOutputsOf<D> & string,
    error: string | Omit<ErrorInfo, 'step'> = 'failed',
    o: ReportOptions = {},
  ): boolean {
    const phase = o.phase ?? 'run';
    const { attempt, key, item } = this.target(stepId, phase, o);
    const err = typeof error === 'string' ? { message: error } : error;
    return this.send({ type: 'task.failed', step: stepId, attempt, phase, error: err, ...key, ...item });
  }

  /** The attempt (and, for the in-flight one, the idempotency key) a result is reported for. */
  private target(
    stepId: string,
    phase: 'run' | 'compensate',
    o: ReportOptions,
  ): { attempt: number; key: { key?: string }; item: { item?: number } } {
    const item = o.item === undefined ? {} : { item: o.item };
    if (o.attempt !== undefined)
      return { attempt: o.attempt, key: o.key === undefined ? {} : { key: o.key }, item };
    const t = this.task(stepId, phase, o.item);
    return { attempt: t.attempt, key: { key: o.key ?? t.idempotencyKey }, item };
  }

  /**
   * A heartbeat of the handler running `stepId`'s attempt (or the given attempt / `key` / `item`),
   * as `ctx.heartbeat(details)` writes it, at the fake clock's time: a task with `heartbeatMs` stays
   * alive only by these (`advance` does not renew it), and `details` reach the next attempt.
   * Details are checked as the handler's context checks them (`HEARTBEAT_TOO_LARGE`).
   *
   * @example
   * h.heartbeat('sync', { page: 3 });
   * h.advance(2_000); // no heartbeat for heartbeatMs: lost, retried at once
   * expect(h.dispatched('sync')[0]?.attempt).toBe(2);
   */
  heartbeat(stepId: keyof TaskOutputsOf<D> & string, details?: unknown, o: ReportOptions = {}): boolean {
    const phase = o.phase ?? 'run';
    const { attempt, key, item } = this.target(stepId, phase, o);
    const d = details === undefined ? {} : { details: heartbeatDetails(details) };
    return this.send({ type: 'task.heartbeat', step: stepId, attempt, phase, ...key, ...item, ...d });
  }

  /** Completes the in-flight compensation of `stepId`. */
  compensate(stepId: DispatchingStepOf<D>): boolean {
    return this.untyped.complete(stepId, undefined, { phase: 'compensate' });
  }

  /**
   * Sends a signal (for a typed definition: a name it declares, with its payload type, required
   * unless it may be undefined, as the typed client's `signal` takes them); `id` deduplicates.
   */
  signal<K extends keyof SignalsOf<D> & string>(name: K, ...[payload, id]: SignalArgs<D, K>): boolean {
    return this.send({ type: 'signal', name, payload, ...(id === undefined ? {} : { id }) });
  }

  /** Active steps waiting for a signal (human, wait, collect), with the signal each listens for. */
  awaitingSignal(): Array<AwaitedSignal<D>> {
    return this.state.active.flatMap((id) => {
      const def = compileWorkflow(this.definition).definition.steps[id];
      const signal = def ? kindOf(def).listensFor?.(def) : undefined;
      // The definition's own step and signal names, which its types spell.
      return signal === undefined ? [] : [{ step: id, signal } as AwaitedSignal<D>];
    });
  }

  /**
   * Moves the fake clock forward and ticks every instance of the tree; returns whether anything
   * fired. The harness stands for a live runner: an attempt still running has its lease renewed
   * first (a `task.heartbeat`, as a runner writes it), so it is lost only at its deadline. With
   * `renew: false` its runner died instead: an attempt whose lease lapses by then is lost
   * (`LEASE_LOST`) and retried. A task with `heartbeatMs` is renewed only by its handler's
   * heartbeats (`heartbeat`): silent past its lease, it is lost (`HEARTBEAT_TIMEOUT`).
   */
  advance(ms: number, options: { renew?: boolean } = {}): boolean {
    this.now += ms;
    if (options.renew !== false) for (const h of this.tree) h.renewLeases();
    return this.tickAll();
  }

  /**
   * Moves the fake clock to the earliest wake time of the tree (if any) and ticks: a timer or a
   * deadline, not the end of a running attempt's lease (renewed, as a live runner does).
   */
  advanceToWake(): boolean {
    const wakes = this.tree.flatMap((h) => {
      const at = unleasedWake(h.snapshot);
      return at === null ? [] : [at];
    });
    if (wakes.length === 0) return false;
    this.now = Math.max(this.now, Math.min(...wakes));
    for (const h of this.tree) h.renewLeases();
    return this.tickAll();
  }

  /** Renews, in one write, the lease of every attempt of this instance that lapses by now. */
  private renewLeases(): void {
    const s = this.current;
    if (!s || isTerminal(s.status)) return;
    const beats: EventInput[] = [];
    for (const t of Object.values(s.tasks)) {
      // A handler that heartbeats itself is kept alive by its heartbeats alone, as with a runner.
      if (t.leaseUntil === undefined || t.leaseUntil > this.now || t.heartbeatMs !== undefined) continue;
      const { step: stepId, attempt, phase, idempotencyKey: key, item } = t;
      beats.push({
        type: 'task.heartbeat',
        step: stepId,
        attempt,
        phase,
        key,
        ...(item === undefined ? {} : { item }),
      });
    }
    if (beats.length) this.write(beats);
  }

  private tickAll(): boolean {
    let fired = false;
    for (const h of this.tree) fired = h.send({ type: 'tick' }) || fired;
    return fired;
  }

  /** Cancels (compensating back to the start). */
  cancel(reason?: string): boolean {
    return this.send({ type: 'cancel', ...(reason === undefined ? {} : { reason }) });
  }

  /** Aborts at once, without compensation. */
  abort(reason?: string): boolean {
    return this.send({ type: 'abort', ...(reason === undefined ? {} : { reason }) });
  }

  /** Requeues what sits in dlq (a task step's; `inputPatch` patches the workflow input, shallowly). */
  requeue(o: HarnessRequeueOptions<D> = {}): boolean {
    const { step, inputPatch } = o;
    return this.send({
      type: 'requeue',
      ...(step === undefined ? {} : { step }),
      ...(inputPatch === undefined ? {} : { inputPatch: inputPatch as Record<string, unknown> }),
    });
  }

  /** Output of a completed step (typed by a typed definition's step); undefined until it completes. */
  output<K extends StepIdOf<D>>(stepId: K): OutputRead<D, K> {
    return this.state.steps[stepId]?.output as OutputRead<D, K>;
  }

  /** Every started instance of the tree, this one's root first, then in the order they started. */
  get tree(): WorkflowHarness[] {
    this.state; // throws before start, as every driver does
    const out: WorkflowHarness[] = [];
    for (const m of this.shared.members.values()) {
      const h = m as WorkflowHarness;
      if (h.current) out.push(h);
    }
    return out;
  }

  /** The instances this one started (child steps, workflow map items), in the order they started. */
  get children(): WorkflowHarness[] {
    return this.tree.filter((h) => h.snapshot.parent?.id === this.id);
  }

  /** The instance that started this one, if it is in the tree. */
  get parent(): WorkflowHarness | undefined {
    const ref = this.state.parent;
    return ref && (this.shared.members.get(ref.id) as WorkflowHarness | undefined);
  }

  /**
   * A child's harness: by the step that started it (a map's with its `item`; the latest one when
   * the step ran more than once), or by its instance id. Throws when there is none.
   *
   * @example
   * const h = createHarness(order, { workflows: [line] }).start({ lines: [{ sku: 'A' }] });
   * h.child('lines', 0).complete('pick', { picked: 'A' });
   *
   * For a typed definition it takes the steps that start workflows (or an instance id), and the
   * child's harness is typed by its definition when that is among `workflows`.
   * Or typed by the definition given: `h.child<typeof line>('lines', 0)`. (One signature, not
   * overloads, so a wrong step id's error names it on its first line.)
   */
  child<C extends AnyDefinition = never, K extends ChildRef<D> = ChildRef<D>>(
    stepOrId: K,
    item?: number,
  ): WorkflowHarness<[C] extends [never] ? ChildDefinitionOf<D, W, K> : C>;
  child(stepOrId: string, item?: number): WorkflowHarness {
    const s = this.state;
    const st = s.steps[stepOrId];
    let id = stepOrId;
    if (st && item !== undefined) id = `${s.id}/${s.run}/${stepOrId}/${st.iteration}/${item}`;
    else if (st)
      id = st.child?.id ?? this.children.filter((h) => h.snapshot.parent!.step === stepOrId).at(-1)?.id ?? '';
    const found = this.shared.members.get(id) as WorkflowHarness | undefined;
    if (!found?.current)
      throw new Error(`harness: no child "${stepOrId}"${item === undefined ? '' : ` item ${item}`}`);
    return found;
  }

  /** Child effects asked for and not performed yet (only with `effects: 'manual'`), oldest first. */
  get effects(): readonly ChildEffect[] {
    return [...this.shared.pending];
  }

  /**
   * Performs a child effect: a pending one by index (default the oldest), or any effect object,
   * pending or not (performing one again is what a runner retrying it does). False if none.
   */
  perform(effect: number | ChildEffect = 0): boolean {
    const pending = this.shared.pending;
    const i = typeof effect === 'number' ? effect : pending.indexOf(effect);
    const e = typeof effect === 'number' ? pending[effect] : effect;
    if (e === undefined) return false;
    if (i >= 0) pending.splice(i, 1);
    this.shared.perform(e);
    return true;
  }

  /** Takes a pending effect away unperformed, as a runner crashing before it would; returns it. */
  drop(index = 0): ChildEffect | undefined {
    return this.shared.pending.splice(index, 1)[0];
  }

  /** Performs every pending child effect and those they ask for, until none is left. */
  settle(): this {
    this.shared.flush();
    return this;
  }

  /**
   * Runs every dispatched task of the tree with the given synchronous handlers until none is left
   * that they cover (timers are not advanced). A handler that throws fails the attempt. For typed
   * definitions the handler names are theirs, and each handler's task input and return are typed
   * as that handler's (see {@link SyncHandlers}).
   */
  runHandlers(handlers: SyncHandlers<readonly [D, ...W]>, maxRounds = 1000): this {
    runTreeSync(this.untyped, handlers as SyncHandlers, maxRounds);
    return this;
  }

  /**
   * Runs the real handlers (sync or async, with the full handler context) on every dispatched task
   * of the tree they cover, applying their results (and performing child effects), until none is
   * left; with `timers: 'advance'` the fake clock then jumps to the next wake time and it goes on,
   * until every instance has ended or nothing is due — past a human or wait step's deadline too (its
   * timeout fires). `timers: 'until-signal'` advances the same way but stops once a step waits for a
   * signal, before any of its timeouts fire: send the decision, then run again. A thrown error fails
   * the attempt as the runner records it.
   *
   * @example
   * const h = createHarness(order);
   * await h.start({ sku: 'A' }).run(handlers, { timers: 'advance' });
   * assert.equal(h.status, 'completed');
   */
  async run(
    handlers: Partial<HandlersFor<readonly [D, ...W]>>,
    options: { timers?: 'advance' | 'until-signal' | 'stop'; maxRounds?: number } = {},
  ): Promise<this> {
    // `ctx.setAttributes` checks with the rules of the harness's kinds, as a runner's does.
    const search = this.options.kinds?.find((k) => k.search)?.search;
    await runTree(this.untyped, handlers as Record<string, Handler | undefined>, { ...options, search });
    return this;
  }

  /** The snapshot rebuilt from the recorded events; equal to `snapshot` when the reducer is deterministic. */
  replayed(): Snapshot | null {
    let s = this.options.from ?? null;
    if (s === null) return replay(this.definition, this.events, this.options);
    for (const e of this.events) s = step(this.definition, s, e, this.options);
    return s;
  }
}

/**
 * Creates a {@link WorkflowHarness} for a definition; with `workflows`, for the tree it starts.
 *
 * @example
 * const h = createHarness(order, { workflows: [line] }).start({ lines: [{ sku: 'A' }] });
 * await h.run(handlers, { timers: 'advance' });
 * assert.equal(h.child('lines', 0).status, 'completed');
 */
export function createHarness<
  const D extends AnyDefinition,
  const W extends readonly AnyDefinition[] = readonly [],
>(definition: D, options?: HarnessOptions<W>): WorkflowHarness<D, W> {
  return new WorkflowHarness(definition, options);
}

/** When `s` is next due if every running attempt's lease is renewed: its earliest timer or task deadline. */
function unleasedWake(s: Snapshot): number | null {
  if (s.wakeAt === null) return null;
  let at: number | null = null;
  for (const t of s.timers) if (at === null || t.at < at) at = t.at;
  for (const t of Object.values(s.tasks)) {
    // A lease only its handler renews ends where that handler went silent.
    const due = t.heartbeatMs !== undefined && t.leaseUntil !== undefined ? taskDue(t) : t.deadline;
    if (at === null || due < at) at = due;
  }
  return at;
}
