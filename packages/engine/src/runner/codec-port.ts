import type { Store } from '../store/store.js';

// How a runner encrypts what it stores, without carrying the code: `defineCodec` (and
// `aesGcmCodec`) of `@stepfold/engine` implement it, so a runner without a codec pays nothing.

/** What `createRunner`'s `codec` option takes: a codec made by `aesGcmCodec(...)` or `defineCodec(...)`. */
export interface RunnerCodec {
  /**
   * `store` with the instance data encoded on the way in (creates, saves, sent signals) and
   * decoded on the way out (loads, claims, lists, wake notices), so the runner sees plaintext.
   */
  wrap(store: Store): Store;
  /** An offloaded payload's JSON text as the payload store keeps it. */
  sealBody(json: string): Promise<string>;
  /** The JSON text of a body {@link sealBody} made (any other body as it is). */
  openBody(body: string): Promise<string>;
}
