import type { TaskJob } from '../runner/port.js';
import type { JobOutcome } from './types.js';

/** What the pool tells its worker. */
export interface PoolEvents {
  start(job: TaskJob): void;
  /** A job ended: `startedAt` is when it started running (by the pool's clock), null if it never ran (0 ms). */
  end(job: TaskJob, outcome: JobOutcome, startedAt: number | null, error?: unknown): void;
  /** A slot came free (or the pool went idle). */
  freed(): void;
}

/**
 * Times one attempt may be given back for having waited until its deadline was near; after that
 * a worker runs it when a slot frees, however near its deadline, so no attempt is handed round
 * for ever (its deadline then decides, as it does for a job that never waited).
 */
export const MAX_GIVE_BACKS = 3;

/**
 * Bounded concurrency with fairness: at most `concurrency` handler runs at once, at most
 * `caps[workflow]` of one workflow, and waiting jobs started round-robin across workflows, so one
 * workflow's backlog cannot hold another's jobs back. A job that waited for a slot until its
 * deadline was too near is given back unstarted (at most {@link MAX_GIVE_BACKS} times an attempt),
 * as is every job once the pool is closed (see {@link giveBack}); a job that finds a slot free
 * starts at once, however near its deadline: waiting did not cost it that time, and a slow store's
 * round trips (which count from the poll) must not send it round again.
 */
export class TaskPool {
  private running = 0;
  private waiting = 0;
  private readonly runningBy = new Map<string, number>();
  private readonly queues = new Map<string, TaskJob[]>();
  /** Workflows with waiting jobs, next to serve first. */
  private turn: string[] = [];
  /**
   * The jobs running, in the order they started. A list, not a set: a set's table, outgrown and
   * rehashed away from, keeps pointing at the jobs it held (and their snapshots) until a full
   * collection, so they outlive young collections and are copied into the old space.
   */
  private readonly live: TaskJob[] = [];
  private readonly releasing = new Set<Promise<void>>();
  private idleWaiters: Array<() => void> = [];
  /** The job `submit` is placing: started in that same call, it never waited. */
  private arriving: TaskJob | undefined;
  closed = false;

  constructor(
    private readonly concurrency: number,
    private readonly caps: Readonly<Record<string, number>>,
    private readonly startMarginMs: number,
    private readonly clock: () => number,
    private readonly events: PoolEvents,
  ) {}

  get size(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting };
  }

  /** Slots neither running nor promised to a waiting job. */
  free(): number {
    return Math.max(0, this.concurrency - this.running - this.waiting);
  }

  /** Free slots one workflow may still take under its cap. */
  freeFor(workflow: string): number {
    const cap = this.caps[workflow];
    if (cap === undefined) return this.free();
    const used = (this.runningBy.get(workflow) ?? 0) + (this.queues.get(workflow)?.length ?? 0);
    return Math.max(0, Math.min(this.free(), cap - used));
  }

  /** Takes a job: starts it if a slot (and its workflow's cap) allows, else queues it; once closed, gives it back. */
  submit(job: TaskJob): void {
    if (this.closed) {
      this.giveBack(job);
      return;
    }
    let q = this.queues.get(job.workflow);
    if (!q) {
      q = [];
      this.queues.set(job.workflow, q);
    }
    if (q.length === 0) this.turn.push(job.workflow);
    q.push(job);
    this.waiting++;
    this.arriving = job;
    try {
      this.pump();
    } finally {
      this.arriving = undefined;
    }
  }

  /** Gives every waiting job back (shutdown): see {@link giveBack}. */
  releaseWaiting(): void {
    for (const q of this.queues.values()) for (const job of q.splice(0)) this.giveBack(job);
    this.turn = [];
    this.waiting = 0;
    this.settle();
  }

  /** Resolves once every give-back write has been answered. */
  async released(): Promise<void> {
    while (this.releasing.size > 0) await Promise.allSettled([...this.releasing]);
  }

  /** Fires the AbortSignal of every running handler; returns how many. */
  abortRunning(reason: unknown): number {
    // A copy, and each job still running when its turn comes: one that ends as another is aborted
    // leaves the list meanwhile.
    const running = this.live.slice();
    for (let i = 0; i < running.length; i++) if (this.live.includes(running[i]!)) running[i]!.abort(reason);
    return this.live.length;
  }

  /** Resolves when nothing runs, waits or is being given back. */
  whenIdle(): Promise<void> {
    if (this.running === 0 && this.waiting === 0 && this.releasing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    let scanned = 0;
    while (this.running < this.concurrency && this.turn.length > 0 && scanned < this.turn.length) {
      const workflow = this.turn.shift()!;
      const q = this.queues.get(workflow)!;
      const cap = this.caps[workflow];
      if (cap !== undefined && (this.runningBy.get(workflow) ?? 0) >= cap) {
        // At its cap: keep its place at the back and try the others.
        this.turn.push(workflow);
        scanned++;
        continue;
      }
      scanned = 0;
      const job = q.shift()!;
      this.waiting--;
      if (q.length > 0) this.turn.push(workflow);
      if (this.tooLate(job)) {
        // Waiting here must not cost an attempt: queued again, it gets a fresh deadline when taken.
        this.giveBack(job);
        continue;
      }
      this.run(job);
    }
    this.settle();
  }

  /** Whether a job about to start should be given back instead: it waited for its slot until its deadline was near, and has not been given back too often. */
  private tooLate(job: TaskJob): boolean {
    if (job === this.arriving || (job.task.releases ?? 0) >= MAX_GIVE_BACKS) return false;
    return job.task.deadline - this.clock() < this.startMarginMs;
  }

  private run(job: TaskJob): void {
    this.running++;
    this.runningBy.set(job.workflow, (this.runningBy.get(job.workflow) ?? 0) + 1);
    this.live.push(job);
    const t0 = this.clock();
    this.events.start(job);
    const end = (outcome: JobOutcome, error?: unknown) => {
      this.running--;
      this.runningBy.set(job.workflow, this.runningBy.get(job.workflow)! - 1);
      this.forget(job);
      // The start time, not the duration: only a `taskEnd` observer needs the clock read again.
      this.events.end(job, outcome, t0, error);
      this.pump();
      this.events.freed();
    };
    let p: Promise<'completed' | 'failed'>;
    try {
      p = job.run();
    } catch (e) {
      end('error', e);
      return;
    }
    p.then(
      (outcome) => end(outcome),
      (e) => end('error', e),
    );
  }

  /** Takes an ended job off the running list, keeping the others' order. */
  private forget(job: TaskJob): void {
    const live = this.live;
    const i = live.lastIndexOf(job);
    if (i < 0) return;
    for (let k = i + 1; k < live.length; k++) live[k - 1] = live[k]!;
    live.pop();
  }

  /**
   * A job this pool will not start: written back as queued for any worker (this one included, while
   * it runs), same attempt, so none waits out its deadline; if that write fails, the deadline hands
   * it on (dropped).
   */
  private giveBack(job: TaskJob): void {
    const p = job.release().then(
      () => this.events.end(job, 'released', null),
      (e) => this.events.end(job, 'dropped', null, e),
    );
    this.releasing.add(p);
    void p.finally(() => {
      this.releasing.delete(p);
      this.settle();
    });
    this.events.freed();
  }

  private settle(): void {
    if (this.running > 0 || this.waiting > 0 || this.releasing.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
