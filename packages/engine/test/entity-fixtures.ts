import { type Snapshot, type, workflow } from '@stepfold/engine';

/** Options of {@link documentEntity}. */
export interface EntityOptions {
  /** Batches per run before continue-as-new. */
  batchesPerRun: number;
  maxItems?: number;
  idleMs?: number;
  inbox?: number;
  log?: number;
}

/**
 * The document-lifecycle entity: collect events (batches of up to 8, or after 10 s
 * of quiet) → process the batch → loop; every `batchesPerRun` batches, continue as new.
 */
export function documentEntity(o: EntityOptions) {
  return workflow('document', 1, {
    limits: { inbox: o.inbox ?? 1000, ...(o.log === undefined ? {} : { log: o.log }) },
  })
    .input(type<{ doc: string; lastBatch?: number }>())
    .collect('gather', { signal: 'event', maxItems: o.maxItems ?? 8, idleMs: o.idleMs ?? 10_000 })
    .task('process', {
      handler: 'processBatch',
      input: { doc: 'input.doc', events: 'outputs.gather' },
    })
    .choice('more', {
      branches: [{ when: { '<': [{ var: 'outputs.process.iteration' }, o.batchesPerRun] }, next: 'gather' }],
      otherwise: 'restart',
    })
    .continueAsNew('restart', { carry: { doc: 'input.doc', lastBatch: 'outputs.process.iteration' } })
    .build();
}

/** What processBatch gets and returns. */
export interface BatchInput {
  doc: string;
  events: unknown[];
}

/** JSON size in bytes of a snapshot. */
export function sizeOf(s: Snapshot): number {
  return new TextEncoder().encode(JSON.stringify(s)).length;
}
