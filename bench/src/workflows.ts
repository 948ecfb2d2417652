import { type Handler, type WorkflowDefinition, workflow } from '@stepfold/engine';

/** Ids of the ten steps of the linear workflow. */
export const LINEAR_STEPS = Array.from({ length: 10 }, (_, i) => `s${i + 1}`);

/** Ten task steps in a row, each running the no-op handler. */
export const linear10: WorkflowDefinition = LINEAR_STEPS.reduce(
  (b, id) => b.task(id, { handler: 'noop' }),
  workflow('bench-linear', 1),
).build();

/** The no-op handler every linear step runs. */
export const noop: Handler = () => null;

/**
 * The document-lifecycle entity of SPEC §11 scenario 6: collect signals into batches of up to 8
 * (or after 10 s of quiet), deduplicated by document key; process the batch; after 4 batches
 * continue as new, carrying the batch count.
 */
export const entity: WorkflowDefinition = workflow('bench-entity', 1)
  .collect('gather', { signal: 'doc', maxItems: 8, idleMs: 10_000, dedupeBy: 'payload.key' })
  .task('process', { handler: 'processBatch', input: 'outputs.gather' })
  .choice('loop', {
    branches: [{ when: { '<': [{ var: 'outputs.process.batches' }, 4] }, next: 'gather' }],
    otherwise: 'again',
  })
  .continueAsNew('again', { carry: { batches: 'outputs.process.batches' } })
  .build();

/**
 * Handler of the entity's process step. A step's state is reset when the loop re-enters it, so
 * the batch number of this run comes from the iteration in the idempotency key
 * (`instance/run/step/iteration`).
 */
export const processBatch: Handler<unknown[]> = ({ input, idempotencyKey }) => ({
  batches: Number(idempotencyKey.slice(idempotencyKey.lastIndexOf('/') + 1)),
  size: input.length,
});
