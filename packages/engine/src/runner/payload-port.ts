import type { Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { RunnerCodec } from './codec-port.js';
import type { RunTask } from './execute-task.js';

// How a runner offloads large values and resolves them, without carrying the code: the
// `offloading()` of `@stepfold/engine` implements it, so a runner without payloads pays
// nothing but an `undefined` check per value.

/** A runner's payload offloading, bound to the snapshot store it writes to. */
export interface PayloadPort {
  /**
   * The value to write in place of `value` for instance `owner`: the value itself, or (its JSON
   * over the threshold) a reference to its stored copy, with the top-level fields `keep` names;
   * `false`: the step said never (`offload: false`), the value itself.
   */
  offload(owner: string, value: unknown, keep?: readonly string[] | false | undefined): Promise<unknown>;
  /** `value` with every reference in it replaced by the value it names (hash-checked). */
  resolve<T>(value: T): Promise<T>;
  /** A copy of `s` whose input and step outputs are resolved (what a handler's view reads); `s` if none is a reference. */
  resolveData(s: Snapshot): Promise<Snapshot>;
  /** `value` with every reference owned by another instance copied under `owner` (a child's output, for its parent). */
  rehome<T>(owner: string, value: T): Promise<T>;
  /**
   * Wraps a runner's handler attempts: the handler sees resolved values and its output is
   * offloaded before it is written; either failing fails the attempt with that error.
   */
  task(run: RunTask): RunTask;
  /** A signal's payload, or each value of a requeue's input patch, offloaded (any other message as is). */
  message<M extends { type: string; id: string }>(m: M): Promise<M>;
  /** Refuses to patch `current`'s input if it is offloaded (the reducer would merge into the reference). */
  checkPatch(current: Snapshot): Promise<void>;
}

/** What `createRunner`'s `payloads` option takes: `offloading(...)` from `@stepfold/engine`. */
export interface RunnerPayloads {
  /**
   * The port for a runner writing to `store` (the default threshold depends on its size limit);
   * with the runner's `codec`, bodies are stored encoded.
   */
  bind(store: Store, codec?: RunnerCodec): PayloadPort;
}
