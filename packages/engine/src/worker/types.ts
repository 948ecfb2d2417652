import type { AnyDefinition } from '../runner/handler-types.js';
import type { TaskJob } from '../runner/port.js';
import type { Runner, WorkflowNameOf } from '../runner/types.js';
import type { WakeNotice, WakeSource } from '../store/store.js';

/** Where a worker stands among the workers that hear the same wake notices. */
export interface FleetPosition {
  /** This worker's place, 0-based. */
  index: number;
  /** How many workers hear the notices. */
  size: number;
}

/** Polling cadence of a worker: the pause after an empty round grows from `minMs` to `maxMs`. */
export interface PollOptions {
  /** Pause after the first empty round (default 50 ms). */
  minMs?: number | undefined;
  /** Longest pause without a live wake subscription (default 5 000 ms). */
  maxMs?: number | undefined;
  /** Longest pause while a wake subscription is live: polling is then only a backstop (default 30 000 ms). */
  maxWithWakesMs?: number | undefined;
  /** Growth of the pause per empty round (default 2). */
  factor?: number | undefined;
  /** ± share of each pause chosen at random, so workers drift apart (default 0.1). */
  jitter?: number | undefined;
}

/** How a worker shuts down: see {@link Worker.stop}. */
export interface ShutdownOptions {
  /** Time running handlers get to finish (default 30 000 ms). */
  graceMs?: number | undefined;
  /** After the grace, their AbortSignals fire; time they get to return then (default 5 000 ms). */
  abortMs?: number | undefined;
}

/** Options of `createWorker`; `W` is its runner's workflows, whose names `workflowConcurrency` takes. */
export interface WorkerOptions<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> {
  /** The runner whose handlers this worker runs; one worker per runner. */
  runner: Runner<W>;
  /** Handler runs in flight at once, every workflow together (default 10). */
  concurrency?: number | undefined;
  /** Caps inside `concurrency` per workflow name (one of the runner's), e.g. `{ 'video-encode': 2 }`. */
  workflowConcurrency?: Readonly<Partial<Record<WorkflowNameOf<W>, number>>> | undefined;
  poll?: PollOptions | undefined;
  /**
   * `workflow` (default): one `listDue` lane per workflow each round, so a flooded workflow cannot
   * hold another's due instances back. `single`: one `listDue` for all, for a store where each poll
   * is costly (a scan); per-workflow caps still hold for the handlers, not for what is fetched.
   */
  lanes?: 'workflow' | 'single' | undefined;
  /** Wake source to follow; default the store's own (`store.wakes`); `false` polls only. */
  wakes?: WakeSource | false | undefined;
  /**
   * Take a handed-off task from the snapshot its wake notice carries, with no claim and no load
   * (default true). The snapshot is checked as a load is, but its origin is whoever can send on the
   * store's channel: PostgreSQL lets every role that can connect NOTIFY any channel, Redis every
   * client its ACL lets PUBLISH. Where roles you do not trust with the instances can do that, set
   * false: the worker then claims the instance by id and reads it from the store.
   */
  handoffSnapshots?: boolean | undefined;
  /**
   * A job that waited for a free slot until its deadline was nearer than this is given back
   * (queued again, same attempt) rather than started late, at most 3 times an attempt; a job that
   * finds a slot free starts at once, whatever its deadline (default 1 000 ms).
   */
  startMarginMs?: number | undefined;
  /**
   * How long each claim this worker takes lasts (default 5 000 ms): an instance a poll claimed is
   * held from the poll until its tick, one claimed ahead of its timer from that time until its tick.
   * A claim only keeps two workers from ticking one instance at once (the tick's write ends it; a
   * running handler is guarded by its task's deadline instead), so it is short: a worker killed
   * holding claims delays those instances by at most this much. The store's own `claimMs` applies
   * only to callers that name no lease (`runner.processDue`).
   */
  claimLeaseMs?: number | undefined;
  /**
   * Where this worker stands among the workers that hear the same wake notices (`runWorkers` gives
   * each process its place: `fleetFromEnv()` of `@stepfold/node`). A task a notice hands to every
   * worker is then taken at once by the one the instance id's hash picks; the others stand by in
   * turn, `standbyMs` apart, and claim it by id only if it is still there. Without it, a worker
   * takes at once until it loses a take to another, then stands by a share of `standbyMs`.
   */
  fleet?: FleetPosition | undefined;
  /** Time between the turns of workers that heard one notice (default 50 ms; 0: all at once). */
  standbyMs?: number | undefined;
  /** How long an instance that cannot be stepped here (unknown workflow or version) is skipped at first (default 1 000 ms, doubling up to 5 min). */
  skipMs?: number | undefined;
  shutdown?: ShutdownOptions | undefined;
  /** Epoch-ms clock (default `Date.now`); sleeps use the platform's timers. */
  clock?: (() => number) | undefined;
  /** Observers; one that throws is ignored. */
  on?: Partial<WorkerEvents> | undefined;
}

/** How a job ended: its handler returned or threw, its result could not be written, or it never ran. */
export type JobOutcome = 'completed' | 'failed' | 'error' | 'dropped' | 'released';

/** What a worker reports as it goes. */
export interface WorkerEvents {
  /** A poll of one lane (a workflow name, `*` for a single lane) returned these ids, claimed on stores that claim. */
  claimed(ids: readonly string[], lane: string): void;
  /** Milliseconds between an instance falling due and this worker's tick of it; `workflow` is the instance's workflow name. */
  lag(ms: number, id: string, workflow: string): void;
  taskStart(job: TaskJob): void;
  taskEnd(job: TaskJob, outcome: JobOutcome, ms: number): void;
  /** An instance this worker cannot step (its workflow or version is not registered here) is skipped until `until`. */
  skipped(id: string, error: unknown, until: number): void;
  wake(hint: WakeNotice): void;
  /** The wake subscription broke: polling runs at its fast pace until it is back. */
  wakeLost(error: unknown): void;
  wakeRestored(): void;
  /** Something failed and was retried or skipped: a poll, a tick, a result write or the wake subscription. */
  error(error: unknown, where: 'poll' | 'tick' | 'task' | 'wake'): void;
  stopping(info: { running: number; queued: number }): void;
  /**
   * Stopped: `aborted` handlers were fired their AbortSignal; `released` tasks this worker had
   * queued but never started were written back for any worker; `dropped` ones could not be (their
   * deadline hands them on).
   */
  stopped(info: { aborted: number; dropped: number; released: number }): void;
}

/** How a worker's parts report an event to its observers. */
export type EmitEvent = <K extends keyof WorkerEvents>(k: K, ...args: Parameters<WorkerEvents[K]>) => void;

/** Counters and gauges of a worker since it started. */
export interface WorkerStats {
  /** Instances taken to tick: ids polls returned (claimed, on stores that claim) and hand-offs taken from notices. */
  claimed: number;
  /** Ticks written. */
  ticks: number;
  /**
   * Handler runs that returned / threw / could not write their result / were dropped unrun / were
   * given back unrun at shutdown (written as queued for any worker).
   */
  completed: number;
  failed: number;
  errors: number;
  dropped: number;
  released: number;
  /** Instances skipped because this worker cannot step them. */
  skipped: number;
  /** listDue calls. */
  polls: number;
  /** Wake notices received. */
  wakes: number;
  /** Writes of this worker's runner that lost a race and were re-applied. */
  conflicts: number;
  /**
   * Tasks (or sent signals) a notice handed to every worker that another worker took first: this
   * worker's conditional write lost to it, or its claim by id after standing by found nothing.
   */
  lostTakes: number;
  /** Wake notices whose snapshot was not the stored instance (forged or corrupted): refused, nothing written, each also an `error` event. */
  refusedNotices: number;
  /**
   * Claimed rows whose stored snapshot (or a sent signal) could not be read, or whose snapshot the
   * tick found not steppable (INVALID_SNAPSHOT): left out, still claimed until the lease lapses,
   * each also an `error` event.
   */
  unreadable: number;
  /** Handler runs now running / waiting for a slot. */
  running: number;
  queued: number;
  /** Lag of the latest tick and the largest seen, in ms (see {@link WorkerEvents.lag}). */
  lastLagMs: number;
  maxLagMs: number;
}

/** A worker: polls due instances, follows wake notices and runs handlers with bounded concurrency. */
export interface Worker {
  /** Subscribes to wakes and starts polling; resolves once the first poll is scheduled. */
  start(): Promise<void>;
  /** Stops polling, lets running handlers finish (then aborts them), gives queued ones back to any worker; idempotent. */
  stop(options?: ShutdownOptions): Promise<void>;
  /** Polls now (something became due that the worker cannot know of). */
  nudge(): void;
  /** Resolves once a poll found nothing due and no handler runs or waits. */
  idle(): Promise<void>;
  readonly stats: Readonly<WorkerStats>;
}
