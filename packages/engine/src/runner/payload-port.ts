import { ValidationError } from '../errors.js';
import { isPayloadRef } from '../payload-ref.js';
import type { Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';

// How a runner offloads large values and resolves them, without carrying the code: the
// `offloading()` of `@stepfold/engine/payloads` implements it, so a runner without payloads (and
// the size-capped main entry) pays nothing but an `undefined` check per value.

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
}

/** What `createRunner`'s `payloads` option takes: `offloading(...)` from `@stepfold/engine/payloads`. */
export interface RunnerPayloads {
  /** The port for a runner writing to `store` (the default threshold depends on its size limit). */
  bind(store: Store): PayloadPort;
}

/** A requeue's input patch with each value over the threshold offloaded (a patch adds fields; their values may be large). */
export async function patchOffloaded(
  port: PayloadPort,
  id: string,
  patch: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const entries = await Promise.all(
    Object.entries(patch).map(async ([k, v]) => [k, await port.offload(id, v)] as const),
  );
  return Object.fromEntries(entries);
}

/**
 * Refuses a patch of an offloaded input: the reducer would merge the patch into the reference, not
 * into the value (it never sees the value). Requeue without a patch, or start the instance anew.
 */
export async function refuseOffloadedInput(current: Snapshot): Promise<void> {
  if (isPayloadRef(current.input))
    throw new ValidationError(
      'INVALID_INPUT',
      `the input of ${current.id} is offloaded: it cannot be patched`,
      [{ path: 'inputPatch', message: 'the instance input is a payload reference' }],
    );
}
