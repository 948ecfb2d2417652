import { StreamUnsupportedError } from '../errors.js';
import type { TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { StreamAttempt } from '../store/stream.js';

// `ctx.stream`: what a handler attempt appends to its instance's stream (model tokens, progress, a
// settled tool result), batched and flushed before the attempt's result is written, so a reader
// never sees a result whose chunks are still on their way. The store's stream makes each
// attempt's side (`StreamStore.attempt`): a runner over a store without one carries only this.

/** What a handler writes its chunks to: `ctx.stream`. */
export interface HandlerStream {
  /**
   * Queues a chunk (a JSON value) for the instance's stream; queued chunks go in batches. Throws
   * `STREAM_UNSUPPORTED` when the runner's store has no stream, `INVALID_INPUT` for a value that is
   * not JSON or is too large, and `STREAM_FENCED` once a newer attempt of the step began (this one
   * is a zombie: its chunks are no longer wanted, and it should stop).
   */
  write(chunk: unknown): void;
  /** Writes what is queued now; resolves once it is stored (a settled tool result a reader should see at once). */
  flush(): Promise<void>;
}

/**
 * The stream key of a task: its step, a map item's index and the compensation phase, as the
 * snapshot keys its tasks (`step`, `step[2]`, `step:compensate`), so each has attempts of its own
 * and one item's retry does not fence another item.
 */
export function streamStepOf(task: Pick<TaskState, 'step' | 'phase' | 'item'>): string {
  const base = task.item === undefined ? task.step : `${task.step}[${task.item}]`;
  return task.phase === 'run' ? base : `${base}:compensate`;
}

/** The attempt's side of its instance's stream, when the store's stream makes one. */
export function attemptStreamOf(
  store: Store,
  instance: string,
  task: Pick<TaskState, 'step' | 'phase' | 'item' | 'attempt'>,
): StreamAttempt | undefined {
  return store.stream?.attempt?.(instance, streamStepOf(task), task.attempt);
}

/** `ctx.stream` of a runner whose store has no stream: each write throws `STREAM_UNSUPPORTED`. */
export function noStream(instance: string, step: string): HandlerStream {
  return {
    write() {
      throw new StreamUnsupportedError(instance, step);
    },
    flush: () => Promise.resolve(),
  };
}
