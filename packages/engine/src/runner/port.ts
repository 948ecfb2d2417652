// What only a worker reaches of a runner: the jobs its writes dispatch, the executor that takes
// them, and the tick that starts from what the worker took from the store. `createRunner` lends
// each runner its core (`attachCore`); a worker builds the port from it (`runnerPort(runner)`).
// None of it is on the `Runner` type: tools reach a runner's internals through this one port.

import { isStepfoldError, VersionConflictError } from '../errors.js';
import { taskKey } from '../reducer/transition-context.js';
import type { LogEntry, Snapshot, TaskState } from '../snapshot.js';
import type { SentSignal } from '../store/store.js';
import { resultEvent } from './execute-task.js';
import type { InFlight } from './in-flight.js';
import type { WorkflowRegistry } from './registry.js';
import type { TaskLeases } from './task-leases.js';
import type { HandleResult, Runner } from './types.js';
import { Work } from './work.js';
import type { WriteLoop } from './write-loop.js';
import type { OnWrite, TakenWrite, WriteBase } from './write-request.js';

/** A handler run a write of the runner dispatched, handed to the {@link TaskExecutor} of a worker. */
export interface TaskJob {
  readonly instanceId: string;
  readonly workflow: string;
  /** The task as dispatched: step, phase, attempt, idempotency key, handler, deadline (epoch ms). */
  readonly task: Readonly<TaskState>;
  /**
   * Runs the handler and writes its result (with the runner's conflict retries). Resolves with
   * whether the handler returned (`completed`) or threw (`failed`); rejects if the result could not
   * be written (the deadline re-dispatches the task).
   */
  run(): Promise<'completed' | 'failed'>;
  /** Gives the job up unrun; its deadline hands the task to another runner with the same key. */
  drop(): void;
  /**
   * Gives the job up unrun and writes it back as queued for any worker (same attempt and key), so
   * no one waits out its deadline; resolves once written, rejects if the write failed (the deadline
   * then hands it on, as after `drop`).
   */
  release(): Promise<void>;
  /** Fires the running handler's AbortSignal (a worker out of grace time). */
  abort(reason: unknown): void;
}

/** Decides where and when the handler runs of a runner execute: see `createWorker`. */
export type TaskExecutor = (job: TaskJob) => void;

/** A worker's tick of one instance, with what it already took from the store. */
export interface TickRequest {
  id: string;
  /** The tick's time (default the runner's clock). */
  now?: number | undefined;
  /** The instance as the store just returned it (`claimDue`, a notice): used instead of a load and checked like one (ignored if its id differs). */
  loaded?: Snapshot | undefined;
  /**
   * `'fail'`: a write that loses a race throws VERSION_CONFLICT instead of reloading and
   * re-applying (default `'reapply'`). For a tick from a `loaded` snapshot others may act on too:
   * the winner's write is announced again if the instance is still due.
   */
  onConflict?: 'reapply' | 'fail' | undefined;
  /** With `loaded`: signals sent to it and waiting in the store's inbox, applied first and consumed by the same write. */
  sent?: readonly SentSignal[] | undefined;
  /**
   * `loaded` (and `sent`) came with a wake notice, not from the store: the write must find exactly
   * them stored (`NOTICE_MISMATCH` otherwise, nothing written).
   */
  noticed?: boolean | undefined;
}

/** What a worker's tick answers: a {@link HandleResult} and what the worker reports of the tick. */
export interface TickResult extends HandleResult {
  /** For a tick that was written: the wake time the instance had when the tick applied (its lag is `now - dueAt`); undefined if nothing was written. */
  dueAt: number | null | undefined;
  /** The `sent` signals the instance refused for good (skipped, and consumed with the write). */
  refused: unknown[];
}

/** The part of a runner only a worker drives. */
export interface RunnerPort {
  /** Ticks one instance and resolves once the tick is written (its handlers go to the executor). */
  tick(request: TickRequest): Promise<TickResult>;
  /**
   * Sends every handler run this runner's writes dispatch to `executor` instead of running it at
   * once (how a worker bounds concurrency), and every snapshot it writes to `written`; returns the
   * function that detaches them again.
   */
  executeWith(executor: TaskExecutor, written?: (snapshot: Snapshot) => void): () => void;
  /**
   * The shortest lease this runner gives the attempts it starts (its `taskLeaseMs`, or the
   * `heartbeatMs` of a task step it registers): a worker polls often enough to find a lapsed one.
   */
  readonly taskLeaseMs: number;
}

/**
 * Takes a task a write of `call` dispatched instead of the runner running it at once. The task is
 * counted in `call` and the runner: whoever takes it ends it with {@link RunnerCore.finish}, or
 * runs it with {@link RunnerCore.runTask} (which ends it).
 */
export type TaskHand = (snapshot: Snapshot, task: TaskState, call: Work) => void;

/** What `createRunner` lends the port: its write loop, its running handlers, the hooks into its calls. */
export interface RunnerCore {
  readonly writes: WriteLoop;
  readonly inFlight: InFlight;
  /** The leases of the attempts this runner holds (renewed while they run). */
  readonly leases: TaskLeases;
  /** The report of `call`'s writes: each is counted in it and starts what it dispatched. */
  report(call: Work): OnWrite;
  /** Runs the handler of a task `s` dispatched in `call`, writes its result, and ends the task; resolves with how the handler ended. */
  runTask(call: Work, s: Snapshot, task: TaskState): Promise<'completed' | 'failed'>;
  /** Ends a task `s` dispatched that `call` counted without running it (dropped, or given back once written). */
  finish(call: Work, s: Snapshot, task: TaskState): void;
  /** Takes every dispatched task instead of the runner running it at once (a worker's, set by {@link RunnerPort.executeWith}). */
  executor: TaskHand | undefined;
  /** Told of every snapshot written (a worker's, set with the executor). */
  observer: ((snapshot: Snapshot) => void) | undefined;
}

// A symbol no other module can name keeps the core off the Runner type. A property rather than a
// WeakMap entry, so a runner spread into a new object or wrapped in a Proxy still drives a worker.
const CORE = Symbol('stepfold.runnerCore');
const ports = new WeakMap<RunnerCore, RunnerPort>();

/** Lends `runner` its core (`createRunner` does, once). */
export function attachCore<R extends object>(runner: R, core: RunnerCore): R {
  return Object.assign(runner, { [CORE]: core });
}

/** The port of a runner `createRunner` made; throws for anything else (say, a runner of another copy of the engine). */
export function runnerPort(runner: Runner): RunnerPort {
  const core = (runner as { [CORE]?: RunnerCore })[CORE];
  if (!core)
    throw new TypeError('not a runner createRunner made (is a second copy of @stepfold/engine loaded?)');
  let port = ports.get(core);
  if (!port) {
    port = portOf(core);
    ports.set(core, port);
  }
  return port;
}

/**
 * The registry and clock of a runner `createRunner` made (what a migration reads of it), from the
 * core it already lends.
 */
export function runnerInternals(runner: Runner): { registry: WorkflowRegistry; clock: () => number } {
  const core = (runner as { [CORE]?: RunnerCore })[CORE];
  if (!core)
    throw new TypeError('not a runner createRunner made (is a second copy of @stepfold/engine loaded?)');
  return { registry: core.writes.registry, clock: core.writes.clock };
}

/** The port over one runner's core (made once per runner, on the first `runnerPort`). */
function portOf(core: RunnerCore): RunnerPort {
  return {
    taskLeaseMs: shortestLease(core),
    async tick(t) {
      const call = new Work();
      // A `loaded` of another instance is not used: the tick loads its own.
      const loaded = t.loaded?.id === t.id ? t.loaded : undefined;
      const stored = await core.writes.apply({
        id: t.id,
        event: (at) => ({ type: 'tick', at: t.now ?? at }),
        onWrite: core.report(call),
        base: loaded && { snapshot: loaded, origin: t.noticed ? 'notice' : 'store' },
        onConflict: t.onConflict,
        taken:
          loaded && (t.noticed || t.sent)
            ? takenWrite(loaded, t.noticed === true, t.sent, (e) => call.refused.push(e))
            : undefined,
      });
      // What it dispatched went to the worker's pool: the tick answers with its write (not with a
      // handler's result its pool may have written meanwhile).
      const snapshot = stored;
      const written = call.latest.has(t.id);
      return {
        snapshot,
        wakeAt: snapshot.wakeAt,
        written,
        dueAt: call.dueAt.get(t.id),
        refused: call.refused,
      };
    },
    // One worker per runner: the executor and observer are the core's until detached.
    executeWith(executor, written) {
      if (core.executor) throw new Error('this runner already has an executor (one worker per runner)');
      const hand: TaskHand = (s, task, call) => executor(new DispatchedJob(core, s, task, call));
      core.executor = hand;
      core.observer = written;
      return () => {
        if (core.executor !== hand) return;
        core.executor = undefined;
        core.observer = undefined;
        core.leases.quiet();
      };
    },
  };
}

/**
 * The job of one dispatched task, ended (in the call that dispatched it, and in the runner) once
 * it is run, dropped or given back. A class, not closures: one object per task on the hot path,
 * its runner's parts in private fields a `taskStart` observer cannot reach.
 */
class DispatchedJob implements TaskJob {
  readonly instanceId: string;
  readonly workflow: string;
  readonly task: Readonly<TaskState>;
  readonly #core: RunnerCore;
  readonly #snapshot: Snapshot;
  readonly #call: Work;
  #started = false;

  constructor(core: RunnerCore, s: Snapshot, task: TaskState, call: Work) {
    this.instanceId = s.id;
    this.workflow = s.workflow.name;
    this.task = task;
    this.#core = core;
    this.#snapshot = s;
    this.#call = call;
  }

  run(): Promise<'completed' | 'failed'> {
    const task = this.task;
    if (this.#started)
      throw new Error(`job ${task.idempotencyKey}#${task.attempt} already ran or was dropped`);
    this.#started = true;
    return this.#core.runTask(this.#call, this.#snapshot, task as TaskState);
  }

  drop(): void {
    if (this.#started) return;
    this.#started = true;
    this.#core.finish(this.#call, this.#snapshot, this.task as TaskState);
  }

  release(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    const s = this.#snapshot;
    // Written back onto the snapshot that dispatched it, which the runner's reducer made.
    const base: WriteBase = { snapshot: s, origin: 'reducer' };
    const event = resultEvent('task.released', this.task, {});
    const core = this.#core;
    const call = this.#call;
    const end = () => core.finish(call, s, this.task as TaskState);
    const p = core.writes.apply({ id: s.id, event, onWrite: core.report(call), base }).then(end, (e) => {
      end();
      throw e;
    });
    return p;
  }

  // Its handler's run: the same task (step, phase, item) and attempt.
  abort(reason: unknown): void {
    const { step, phase, item, attempt } = this.task;
    const key = taskKey(step, phase, item);
    this.#core.inFlight.running
      .get(this.instanceId)
      ?.find((a) => a.task.attempt === attempt && taskKey(a.task.step, a.task.phase, a.task.item) === key)
      ?.abort(reason);
  }
}

/**
 * What a tick from `loaded` adds to its write: the `sent` signals applied first, in the order sent
 * (they were written before the tick's event), each the reducer refuses for good told to
 * `refused` and skipped; all of them consumed by the same save, which (for a notice's snapshot)
 * must also find exactly `loaded` stored. A lost race always throws: the caller takes them again.
 */
function takenWrite(
  loaded: Snapshot,
  noticed: boolean,
  sent: readonly SentSignal[] | undefined,
  refused: (error: unknown) => void,
): TakenWrite {
  const consumed = sent?.length ? sent : undefined;
  return {
    race: sent && 'sent',
    // Sent signals were claimed with `loaded`: a newer snapshot this runner wrote since may have
    // applied some already. Never twice: the caller claims them again.
    wrap: (write) => (r, base) =>
      sent && base?.snapshot !== loaded
        ? Promise.reject(new VersionConflictError(r.id, loaded.version, base?.snapshot.version ?? null))
        : write(r, base),
    before(current, reduce, trusted) {
      let from = current;
      let transitions: readonly LogEntry[] = [];
      for (const { event } of sent ?? []) {
        let r: ReturnType<typeof reduce>;
        try {
          r = reduce(from, event, trusted);
        } catch (e) {
          // Refused for good (an overflowing inbox, a name no step knows): the others still apply.
          if (!isStepfoldError(e) || e.retryable) throw e;
          refused(e);
          continue;
        }
        from = r.snapshot;
        trusted = true; // checked by that call (or made by it)
        transitions = [...transitions, ...r.transitions];
      }
      return { from, transitions, trusted };
    },
    // A notice's snapshot is taken only if it is exactly the one stored (a forged one changes nothing).
    save(current) {
      const matches = noticed && current === loaded ? loaded : undefined;
      return consumed || matches
        ? { ...(consumed ? { consumed } : {}), ...(matches ? { matches } : {}) }
        : undefined;
    },
    // Nothing applied (a finished instance, duplicate ids): the signals are spent all the same.
    // Not those a notice listed: unverified, they are left to the inbox's own claim.
    async unchanged(current, store) {
      if (consumed && !(noticed && current === loaded))
        await store.inbox?.drop(
          current.id,
          consumed.map((p) => p.seq),
          current.version,
        );
    },
  };
}

/** The runner's `taskLeaseMs`, or the shortest `heartbeatMs` of the task steps it registers when shorter. */
function shortestLease(core: RunnerCore): number {
  let ms = core.leases.leaseMs;
  for (const def of core.writes.registry.all())
    for (const id in def.steps) {
      const beat = (def.steps[id] as { heartbeatMs?: number }).heartbeatMs;
      if (beat !== undefined && beat < ms) ms = beat;
    }
  return ms;
}
