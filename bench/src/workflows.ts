import {
  defineWorkflow,
  type Handler,
  type Snapshot,
  step,
  type WorkflowDefinition,
  workflow,
} from '@stepfold/engine';

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

/** The eleven snapshots one linear workflow writes (start, then one per step result), as instance `id`. */
export function linearChain(id: string): Snapshot[] {
  let s = step(linear10, null, { type: 'start', at: Date.now(), id, input: { orderId: 1 } });
  const out = [s];
  for (const [k, name] of LINEAR_STEPS.entries()) {
    s = step(linear10, s, {
      type: 'task.completed',
      at: s.createdAt + k + 1,
      step: name,
      attempt: 1,
      output: null,
    });
    out.push(s);
  }
  return out;
}

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

/** Keys of the flow-limited linear workflow's instances, and each key's limit of running tasks. */
export const FLOW_KEYS = 100;
export const FLOW_KEY_LIMIT = 4;

/** The linear workflow with every task limited to FLOW_KEY_LIMIT at once per `input.key`. */
export const linear10Flow: WorkflowDefinition = defineWorkflow({
  name: 'bench-linear-flow',
  version: 1,
  start: LINEAR_STEPS[0]!,
  steps: Object.fromEntries(
    LINEAR_STEPS.map((id, i) => {
      const next = LINEAR_STEPS[i + 1];
      const concurrency = { key: 'input.key', limit: FLOW_KEY_LIMIT };
      return [id, { kind: 'task', handler: 'noop', concurrency, ...(next === undefined ? {} : { next }) }];
    }),
  ),
});

/**
 * The linear workflow with one concurrency key on the workflow: at most FLOW_KEY_LIMIT instances at
 * once per `input.key` (taken when it is created, released when it ends), its tasks unlimited.
 */
export const linear10InstanceFlow: WorkflowDefinition = defineWorkflow({
  name: 'bench-linear-flow-instance',
  version: 1,
  start: LINEAR_STEPS[0]!,
  concurrency: { key: 'input.key', limit: FLOW_KEY_LIMIT },
  steps: Object.fromEntries(
    LINEAR_STEPS.map((id, i) => {
      const next = LINEAR_STEPS[i + 1];
      return [id, { kind: 'task', handler: 'noop', ...(next === undefined ? {} : { next }) }];
    }),
  ),
});

/** Starts per second per tenant that flow-rate-accuracy's workflow lets through (a sliding window of 1 s). */
export const FLOW_RATE_LIMIT = 50;

/** One task, at most FLOW_RATE_LIMIT starts per tenant in any second; its handler reports its start. */
export const rateLimited: WorkflowDefinition = defineWorkflow({
  name: 'bench-flow-rate',
  version: 1,
  start: 'call',
  steps: {
    call: {
      kind: 'task',
      handler: 'stamp',
      rateLimit: { key: 'input.tenant', limit: FLOW_RATE_LIMIT, periodMs: 1000 },
    },
  },
});

/** One task whose handler reports its start and works `input.workMs`; due work taken in turns by tenant. */
export const fairJob: WorkflowDefinition = defineWorkflow({
  name: 'bench-flow-fair',
  version: 1,
  fairness: { key: 'input.tenant' },
  start: 'work',
  steps: { work: { kind: 'task', handler: 'stamp' } },
});

/** The flow rows' workflows (a fleet started with `flow` registers them, with `flowControl`). */
export const FLOW_WORKFLOWS = [linear10Flow, linear10InstanceFlow, rateLimited, fairJob];
