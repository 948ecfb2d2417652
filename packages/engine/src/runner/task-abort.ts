import type { TaskState } from '../snapshot.js';

/**
 * The AbortSignal a handler gets, made only when the handler reads it: most handlers never do,
 * and an AbortController plus a deadline timer per task were a visible share of a runner's time.
 * An abort that comes before the read is remembered, so the signal is born aborted. It also says
 * which task run it belongs to (the runner's record of its running handlers is these).
 */
export class TaskAbort {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;
  private settled = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** The signal of a run of `task`: it aborts at the task's deadline, by `clock`, once read. */
  constructor(
    readonly task: Readonly<TaskState>,
    private readonly clock: () => number,
  ) {}

  /** The handler's signal; creating it starts the deadline timer. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
      else if (!this.settled) {
        const ms = Math.max(0, this.task.deadline - this.clock());
        this.timer = setTimeout(() => this.abort(new Error('deadline exceeded')), ms);
        (this.timer as { unref?: () => void }).unref?.();
      }
    }
    return this.controller.signal;
  }

  /** Aborts the signal (now, or at its creation); later calls are ignored. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.dispose();
  }

  /** Stops the deadline timer once the handler has returned; a later read starts none. */
  dispose(): void {
    this.settled = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
