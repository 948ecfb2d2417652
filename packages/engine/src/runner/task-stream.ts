import { StreamUnsupportedError } from '../errors.js';
import type { TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { StreamWriter } from '../store/stream.js';

// `ctx.stream`: what a handler attempt appends to its instance's stream (model tokens, progress, a
// settled tool result), batched through the store's writer and flushed before the attempt's
// result is written, so a reader never sees a result whose chunks are still on their way.

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

/**
 * One attempt's stream. A retry (attempt 2 on) begins at once, before the handler writes anything:
 * readers drop what the superseded attempt streamed (a reset entry), and a zombie of that attempt
 * is fenced even if this one never streams. A first attempt begins with its first append.
 */
export class AttemptStream implements HandlerStream {
  readonly #store: Store;
  readonly #instance: string;
  readonly #step: string;
  readonly #attempt: number;
  #begun: Promise<unknown> | undefined;
  #writer: StreamWriter | undefined;
  #failure: unknown;

  constructor(store: Store, instance: string, task: Pick<TaskState, 'step' | 'phase' | 'item' | 'attempt'>) {
    this.#store = store;
    this.#instance = instance;
    this.#step = streamStepOf(task);
    this.#attempt = task.attempt;
    if (task.attempt > 1 && store.stream) {
      // Kept, never thrown here: a fenced begin ends this attempt's writes, not the process.
      this.#begun = store.stream.begin(instance, this.#step, task.attempt).catch((e: unknown) => {
        this.#failure = e;
      });
    }
  }

  write(chunk: unknown): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (!this.#store.stream) throw new StreamUnsupportedError(this.#instance, this.#step);
    this.#writer ??= this.#store.stream.writer(this.#instance, this.#step, this.#attempt);
    this.#writer.write(chunk);
  }

  async flush(): Promise<void> {
    await this.#begun;
    if (this.#failure !== undefined) throw this.#failure;
    await this.#writer?.flush();
  }

  /** Whether the attempt began or wrote anything: only then is there something to {@link close}. */
  get used(): boolean {
    return this.#begun !== undefined || this.#writer !== undefined;
  }

  /**
   * Stores what is queued and ends the writer, before the runner writes the attempt's result. A
   * failure here (fenced, the store unreachable) loses chunks, never the result: it is not thrown.
   */
  async close(): Promise<void> {
    await this.#begun;
    await this.#writer?.close().catch(() => {});
  }
}
