import { defineWorkflow, type Handler, type WorkflowDefinition, workflow } from '@stepfold/engine';

/** Ids of the ten steps of the linear workflow. */
export const LINEAR_STEPS = Array.from({ length: 10 }, (_, i) => `s${i + 1}`);

/** Ten task steps in a row, each running the no-op handler. */
export const linear10: WorkflowDefinition = defineWorkflow({
  name: 'bench-linear',
  version: 1,
  start: LINEAR_STEPS[0]!,
  steps: Object.fromEntries(
    LINEAR_STEPS.map((id, i) => {
      const next = LINEAR_STEPS[i + 1];
      return [id, { kind: 'task', handler: 'noop', ...(next === undefined ? {} : { next }) }];
    }),
  ),
});

/** The no-op handler every linear step runs. */
export const noop: Handler = () => null;

/** Batches per run before the entity continues as new. */
export const BATCHES_PER_RUN = 10;

/**
 * The document-lifecycle entity, as the engine's tests define it
 * (packages/engine/test/entity-fixtures.ts): collect signals into batches of up to 8 (or after
 * 10 s of quiet), process the batch, loop; every BATCHES_PER_RUN batches, continue as new.
 */
export const entity: WorkflowDefinition = workflow('document', 1, { limits: { inbox: 1000 } })
  .collect('gather', { signal: 'event', maxItems: 8, idleMs: 10_000 })
  .task('process', { handler: 'processBatch', input: { doc: 'input.doc', events: 'outputs.gather' } })
  .choice('more', {
    branches: [{ when: { '<': [{ var: 'outputs.process.iteration' }, BATCHES_PER_RUN] }, next: 'gather' }],
    otherwise: 'restart',
  })
  .continueAsNew('restart', { carry: { doc: 'input.doc', lastBatch: 'outputs.process.iteration' } })
  .build();

/**
 * Handler of the entity's process step: the batch number in this run and the batch size. The
 * batch number is the step's iteration, the last segment of the idempotency key
 * (`instance/run/step/iteration`).
 */
export const processBatch: Handler<{ doc: string; events: unknown[] }> = ({ input, idempotencyKey }) => ({
  iteration: Number(idempotencyKey.slice(idempotencyKey.lastIndexOf('/') + 1)),
  count: input.events.length,
});
