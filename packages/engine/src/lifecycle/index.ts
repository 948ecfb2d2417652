// `@stepfold/engine`: data lifecycle. The tiered store (a hot and a cold store as one,
// with its mover), retention (delete or archive finished instances, payloads with them), and a
// loop to run either periodically.
export { type EveryHandle, type RunEveryOptions, runEvery } from './every.js';
export { isIdle, type MoveOptions, type MoveResult } from './mover.js';
export { type RetentionOptions, type RetentionResult, sweepRetention } from './retention.js';
export { createTieredStore, type TieredStore, type TieredStoreOptions } from './tiered-store.js';
