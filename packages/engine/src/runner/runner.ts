import type { DefinitionInput, WorkflowDefinition } from '../definition/schema.js';
import { AlreadyExistsError, isStepfoldError, NotFoundError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { reduce } from '../reducer/reducer.js';
import { dispatchedBy, taskView } from '../reducer/task-view.js';
import { isTerminal, type LogEntry, type Snapshot, type TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import { notifyHooks, type RunnerHooks } from './hooks.js';
import { createRegistry } from './registry.js';
import { TaskAbort } from './task-abort.js';

/** What a handler receives (SPEC §5). */
export interface HandlerContext<I = unknown> {
  /** The step's mapped input (or the workflow input). */
  input: I;
  /** The instance's workflow input. */
  workflowInput: unknown;
  /** Outputs of completed steps, by step id. */
  outputs: Record<string, unknown>;
  instanceId: string;
  step: string;
  /** `compensate` when undoing the step. */
  phase: 'run' | 'compensate';
  /** 1 for the first try; grows with retries and re-dispatches. */
  attempt: number;
  /** Stable across attempts of one step execution: use it to make side effects idempotent. */
  idempotencyKey: string;
  /** How many times the step has been entered in this run (loops count up; a new run restarts at 1). */
  iteration: number;
  /** Fires on cancel, abort or when the attempt's deadline passes. */
  signal: AbortSignal;
}

/** A task handler: returns the step's output (JSON) or throws to fail the attempt. */
export type Handler<I = unknown, O = unknown> = (ctx: HandlerContext<I>) => O | Promise<O>;

/** Options of {@link createRunner}. */
export interface RunnerOptions {
  store: Store;
  workflows: ReadonlyArray<DefinitionInput | WorkflowDefinition>;
  handlers: Record<string, Handler<never, unknown>>;
  hooks?: RunnerHooks;
  /** Epoch-ms clock; event times come from here (default `Date.now`). */
  clock?: () => number;
  /** How often a conflicting write is reloaded and re-applied before giving up (default 20). */
  conflictRetries?: number;
  /** Run handlers of dispatched tasks in this process (default true). */
  execute?: boolean;
}

/** Options of {@link Runner.start}. */
export interface StartOptions {
  /** Start this version instead of the newest. */
  version?: number;
  /** Reuse the id of a finished instance (completed, failed, cancelled or aborted). */
  reuseFinished?: boolean;
}

/** A message for {@link Runner.handle}: one event for one instance, as a queue or HTTP request carries it. */
export type RunnerMessage =
  | { type: 'start'; id: string; workflow: string; input?: unknown; version?: number }
  | { type: 'signal'; id: string; name: string; payload?: unknown; signalId?: string }
  | { type: 'tick'; id: string }
  | { type: 'cancel' | 'abort'; id: string; reason?: string }
  | { type: 'requeue'; id: string; step?: string; inputPatch?: Record<string, unknown> };

/** Result of {@link Runner.handle}: the snapshot after the event (and its tasks), and when to wake it. */
export interface HandleResult {
  snapshot: Snapshot;
  wakeAt: number | null;
}

/** Drives instances: applies events through the store with conditional writes and runs dispatched handlers. */
export interface Runner {
  start(workflow: string, id: string, input?: unknown, options?: StartOptions): Promise<Snapshot>;
  signal(
    id: string,
    name: string,
    payload?: unknown,
    options?: {
      signalId?: string;
      /** Create and start the instance first if it does not exist (or, with `reuseFinished`, if it has finished). */
      startIfMissing?: { workflow: string; input?: unknown; version?: number; reuseFinished?: boolean };
    },
  ): Promise<Snapshot>;
  cancel(id: string, reason?: string): Promise<Snapshot>;
  abort(id: string, reason?: string): Promise<Snapshot>;
  requeue(id: string, options?: { step?: string; inputPatch?: Record<string, unknown> }): Promise<Snapshot>;
  get(id: string): Promise<Snapshot | null>;
  tick(id: string, now?: number): Promise<Snapshot>;
  /** Ticks up to `limit` due instances; returns their ids. */
  processDue(now?: number, limit?: number): Promise<string[]>;
  handle(message: RunnerMessage): Promise<HandleResult>;
  /** Resolves when every handler this runner started has reported back. */
  idle(): Promise<void>;
}

/** Handler runs started on behalf of one runner call. */
class Work extends Set<Promise<unknown>> {
  /** The newest snapshot this call wrote, per instance. */
  readonly latest = new Map<string, Snapshot>();
}

/** Creates a runner over a store. Validates the workflows and that every handler they name exists. */
export function createRunner(options: RunnerOptions): Runner {
  const { store, hooks } = options;
  const handlers = options.handlers as Record<string, Handler>;
  const clock = options.clock ?? (() => Date.now());
  const maxConflicts = options.conflictRetries ?? 20;
  const execute = options.execute ?? true;
  const registry = createRegistry(options.workflows, new Set(Object.keys(handlers)));
  // Handlers in flight, by instance id then `key/attempt`, so a write looks only at its own instance's.
  const running = new Map<string, Map<string, { abort: TaskAbort; key: string; attempt: number }>>();
  const pending = new Set<Promise<unknown>>();

  const definitionOf = (s: Snapshot) => registry.forSnapshot(s);

  /** Load → step → conditional save, re-applied on conflicts. Returns the stored snapshot. */
  async function apply(
    id: string,
    event: (now: number) => WorkflowEvent,
    work: Work,
    known?: Snapshot,
  ): Promise<Snapshot> {
    let current = known;
    for (let tries = 0; ; tries++) {
      if (!current) {
        const loaded = await store.load(id);
        if (!loaded) throw new NotFoundError(id);
        current = loaded;
      }
      const { snapshot: next, transitions: fresh } = reduce(definitionOf(current), current, event(clock()));
      if (next === current) return current;
      try {
        await store.save(next, current.version);
      } catch (e) {
        if (!isStepfoldError(e, 'VERSION_CONFLICT') || tries >= maxConflicts) throw e;
        current = undefined;
        // Jittered pause so racing runners stop colliding in lockstep.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** tries)));
        continue;
      }
      written(next, work, fresh);
      return next;
    }
  }

  /** After a successful write: hooks, abort handlers the write took away, run the tasks it handed us. */
  function written(s: Snapshot, work: Work, transitions: readonly LogEntry[]): void {
    work.latest.set(s.id, s);
    notifyHooks(hooks, s, transitions);
    const inFlight = running.get(s.id);
    if (inFlight) {
      for (const [k, r] of inFlight) {
        const t = s.tasks[r.key];
        if (!t || t.attempt !== r.attempt || t.detached) {
          r.abort.abort(new Error(isTerminal(s.status) ? `instance ${s.status}` : 'task detached'));
          inFlight.delete(k);
        }
      }
      if (inFlight.size === 0) running.delete(s.id);
    }
    if (!execute) return;
    for (const task of dispatchedBy(s)) track(runTask(s, task, work), work);
  }

  function track(p: Promise<unknown>, work: Work): void {
    pending.add(p);
    work.add(p);
    p.finally(() => {
      pending.delete(p);
      work.delete(p);
    }).catch(() => {});
  }

  async function runTask(s: Snapshot, task: TaskState, work: Work): Promise<void> {
    const def = definitionOf(s);
    const view = taskView(def, s, task);
    const abort = new TaskAbort(() => task.deadline - clock());
    const key = task.phase === 'run' ? task.step : `${task.step}:compensate`;
    const runKey = `${key}\u0000${task.attempt}`;
    const inFlight = running.get(s.id) ?? new Map();
    running.set(s.id, inFlight);
    inFlight.set(runKey, { abort, key, attempt: task.attempt });
    let event: (now: number) => WorkflowEvent;
    try {
      const output = await handlers[task.handler]!({
        input: view.input,
        workflowInput: s.input,
        get outputs() {
          return view.outputs;
        },
        instanceId: s.id,
        step: task.step,
        phase: task.phase,
        attempt: task.attempt,
        idempotencyKey: task.idempotencyKey,
        iteration: view.iteration,
        get signal() {
          return abort.signal;
        },
      });
      const json = output === undefined ? null : JSON.parse(JSON.stringify(output));
      event = (at) => ({
        type: 'task.completed',
        at,
        step: task.step,
        attempt: task.attempt,
        phase: task.phase,
        key: task.idempotencyKey,
        output: json,
      });
    } catch (e) {
      const err = e as {
        message?: unknown;
        code?: unknown;
        retryable?: unknown;
        options?: { code?: string; retryable?: boolean };
      };
      const code = err.options?.code ?? (typeof err.code === 'string' ? err.code : undefined);
      const retryable =
        err.options?.retryable ?? (typeof err.retryable === 'boolean' ? err.retryable : undefined);
      const error = {
        message: typeof err.message === 'string' ? err.message : String(e),
        ...(code === undefined ? {} : { code }),
        ...(retryable === undefined ? {} : { retryable }),
      };
      event = (at) => ({
        type: 'task.failed',
        at,
        step: task.step,
        attempt: task.attempt,
        phase: task.phase,
        key: task.idempotencyKey,
        error,
      });
    } finally {
      abort.dispose();
      inFlight.delete(runKey);
      if (inFlight.size === 0 && running.get(s.id) === inFlight) running.delete(s.id);
    }
    await apply(s.id, event, work, s);
  }

  /** Waits for the handlers this call started (and the ones their results started). */
  async function settled(id: string, work: Work): Promise<Snapshot> {
    while (work.size) await Promise.allSettled([...work]);
    // A finished instance we wrote ourselves cannot have moved on: skip the read back.
    const mine = work.latest.get(id);
    if (mine && isTerminal(mine.status)) return mine;
    const s = await store.load(id);
    if (!s) throw new NotFoundError(id);
    return s;
  }

  async function create(
    workflow: string,
    id: string,
    input: unknown,
    o: StartOptions,
    extra: WorkflowEvent | undefined,
    work: Work,
  ): Promise<Snapshot> {
    assertValidId(id);
    const def = registry.resolve(workflow, o.version);
    // Start and the extra event are written together: the hooks get the transitions of both.
    let fresh: LogEntry[] = [];
    const apply = (from: Snapshot | null, e: WorkflowEvent) => {
      const { snapshot: next, transitions } = reduce(def, from, e);
      fresh = [...fresh, ...transitions];
      return next;
    };
    let s = apply(null, { type: 'start', at: clock(), id, input });
    if (extra) s = apply(s, extra);
    try {
      await store.create(s);
    } catch (e) {
      if (!isStepfoldError(e, 'ALREADY_EXISTS') || !o.reuseFinished) throw e;
      const old = await store.load(id);
      if (!old || !isTerminal(old.status)) throw e;
      fresh = [];
      s = apply(old, { type: 'start', at: clock(), id, input, reuse: true });
      if (extra) s = apply(s, extra);
      try {
        await store.save(s, old.version);
      } catch (conflict) {
        // A finished instance takes no events: whoever changed it reused the id first.
        if (isStepfoldError(conflict, 'VERSION_CONFLICT')) throw new AlreadyExistsError(id);
        throw conflict;
      }
    }
    written(s, work, fresh);
    return s;
  }

  const runner: Runner = {
    async start(workflow, id, input, o = {}) {
      const work = new Work();
      await create(workflow, id, input, o, undefined, work);
      return settled(id, work);
    },
    async signal(id, name, payload, o = {}) {
      assertValidId(id);
      const work = new Work();
      const event = (at: number): WorkflowEvent => ({
        type: 'signal',
        at,
        name,
        payload,
        ...(o.signalId === undefined ? {} : { id: o.signalId }),
      });
      const start = o.startIfMissing;
      if (start) {
        const existing = await store.load(id);
        const restart = existing !== null && start.reuseFinished === true && isTerminal(existing.status);
        if (!existing || restart) {
          try {
            const opts = { version: start.version, reuseFinished: restart };
            await create(start.workflow, id, start.input, opts, event(clock()), work);
            return settled(id, work);
          } catch (e) {
            // Someone else created or restarted it first: deliver the signal to theirs.
            if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
          }
        }
      }
      await apply(id, event, work);
      return settled(id, work);
    },
    async cancel(id, reason) {
      const work = new Work();
      await apply(id, (at) => ({ type: 'cancel', at, ...(reason === undefined ? {} : { reason }) }), work);
      return settled(id, work);
    },
    async abort(id, reason) {
      const work = new Work();
      await apply(id, (at) => ({ type: 'abort', at, ...(reason === undefined ? {} : { reason }) }), work);
      return settled(id, work);
    },
    async requeue(id, o = {}) {
      const work = new Work();
      await apply(id, (at) => ({ type: 'requeue', at, ...o }), work);
      return settled(id, work);
    },
    async get(id) {
      assertValidId(id);
      return store.load(id);
    },
    async tick(id, now) {
      const work = new Work();
      await apply(id, (at) => ({ type: 'tick', at: now ?? at }), work);
      return settled(id, work);
    },
    async processDue(now, limit = 100) {
      const at = now ?? clock();
      const ids = await store.listDue(at, limit);
      const work = new Work();
      const failures: unknown[] = [];
      await Promise.all(
        ids.map((id) =>
          apply(id, () => ({ type: 'tick', at }), work).catch((e) => {
            if (!isStepfoldError(e, 'NOT_FOUND')) failures.push(e);
          }),
        ),
      );
      while (work.size) await Promise.allSettled([...work]);
      // One instance this runner cannot step (say, on a version it no longer registers) must not
      // keep the others from being ticked: they all were; then the first error is reported.
      if (failures.length) throw failures[0];
      return ids;
    },
    async handle(m) {
      let s: Snapshot;
      switch (m.type) {
        case 'start':
          s = await runner.start(
            m.workflow,
            m.id,
            m.input,
            m.version === undefined ? {} : { version: m.version },
          );
          break;
        case 'signal':
          s = await runner.signal(
            m.id,
            m.name,
            m.payload,
            m.signalId === undefined ? {} : { signalId: m.signalId },
          );
          break;
        case 'tick':
          s = await runner.tick(m.id);
          break;
        case 'cancel':
          s = await runner.cancel(m.id, m.reason);
          break;
        case 'abort':
          s = await runner.abort(m.id, m.reason);
          break;
        case 'requeue':
          s = await runner.requeue(m.id, {
            ...(m.step ? { step: m.step } : {}),
            ...(m.inputPatch ? { inputPatch: m.inputPatch } : {}),
          });
          break;
      }
      return { snapshot: s, wakeAt: s.wakeAt };
    },
    async idle() {
      while (pending.size) await Promise.allSettled([...pending]);
    },
  };
  return runner;
}
