import { defineWorkflow } from './compile.js';
import { DEFINITION_KINDS } from './kinds/index.js';
import type {
  DefinitionInput,
  FailurePolicy,
  RetryPolicyInput,
  StepDefinition,
  StepOf,
  WorkflowDefinition,
} from './schema.js';

type Fields<K extends StepDefinition['kind']> = Omit<StepOf<K>, 'kind' | 'id'> & {
  /** Do not link this step to the one added after it (an end of a path or branch). */
  end?: boolean;
};

/** Workflow-level options of {@link workflow}. */
export interface WorkflowOptions {
  onFailure?: FailurePolicy;
  defaults?: { retry?: RetryPolicyInput; timeoutMs?: number };
  /**
   * `inbox`: buffered signals (default 100); `log`: transitions kept in the snapshot (default 16;
   * hooks see every transition whatever the limit); `signalIds`: recent signal ids remembered for
   * deduplication (default 64).
   */
  limits?: { inbox?: number; log?: number; signalIds?: number };
  /** Buffer signals no step listens for instead of refusing them with `UNKNOWN_SIGNAL` (default false). */
  acceptUnknownSignals?: boolean;
  description?: string;
}

/**
 * Typed builder for definitions. Steps run in the order added: a step without `next` (and
 * without `end: true`) continues with the step added after it. `build()` validates everything.
 */
export class WorkflowBuilder {
  private readonly steps: Array<StepDefinition & { id: string; end?: boolean }> = [];

  constructor(
    private readonly name: string,
    private readonly version: number,
    private readonly options: WorkflowOptions = {},
  ) {}

  private add<K extends StepDefinition['kind']>(kind: K, id: string, fields: Fields<K>): this {
    const prev = this.steps[this.steps.length - 1];
    if (prev && !prev.end && canLink(prev) && (prev as { next?: string }).next === undefined) {
      (prev as { next?: string }).next = id;
    }
    this.steps.push({ ...fields, kind, id } as unknown as StepDefinition & { id: string; end?: boolean });
    return this;
  }

  /** A handler call, retried per policy, optionally compensated. */
  task(id: string, fields: Fields<'task'>): this {
    return this.add('task', id, fields);
  }
  /** Branches on conditions over `{ input, outputs }`. */
  choice(id: string, fields: Fields<'choice'>): this {
    return this.add('choice', id, fields);
  }
  /** Forks branches (entry step ids) and joins them. */
  parallel(id: string, fields: Fields<'parallel'>): this {
    return this.add('parallel', id, fields);
  }
  /** Waits for a named signal, optionally with a timeout. */
  wait(id: string, fields: Fields<'wait'>): this {
    return this.add('wait', id, fields);
  }
  /** Waits for a human decision: `{ decision: 'approve' | 'reject' }`. */
  human(id: string, fields: Fields<'human'> = {}): this {
    return this.add('human', id, fields);
  }
  /** A durable timer: `ms` from now, or `until` an epoch-ms value in the data. */
  sleep(id: string, fields: Fields<'sleep'>): this {
    return this.add('sleep', id, fields);
  }
  /** Batches signals until `maxItems`, `idleMs` of quiet, or `maxWaitMs`. */
  collect(id: string, fields: Fields<'collect'>): this {
    return this.add('collect', id, fields);
  }
  /** Rollback after a failure stops here (a cancel still goes past it). */
  savepoint(id: string, fields: Fields<'savepoint'> = {}): this {
    return this.add('savepoint', id, fields);
  }
  /** Ends the run and starts a fresh one of the same instance. */
  continueAsNew(id: string, fields: Fields<'continueAsNew'> = {}): this {
    return this.add('continueAsNew', id, fields);
  }
  /** Completes the workflow (or its parallel branch). */
  succeed(id: string, fields: Fields<'succeed'> = {}): this {
    return this.add('succeed', id, fields);
  }
  /** Fails the workflow with the given error. */
  fail(id: string, fields: Fields<'fail'> = {}): this {
    return this.add('fail', id, fields);
  }

  /** The definition as plain JSON, not yet validated. */
  toJSON(): DefinitionInput {
    const { onFailure, defaults, limits, description, acceptUnknownSignals } = this.options;
    return {
      name: this.name,
      version: this.version,
      start: this.steps[0]?.id ?? '',
      ...(description === undefined ? {} : { description }),
      ...(onFailure === undefined ? {} : { onFailure }),
      ...(defaults === undefined ? {} : { defaults }),
      ...(limits === undefined ? {} : { limits }),
      ...(acceptUnknownSignals === undefined ? {} : { acceptUnknownSignals }),
      steps: this.steps.map(({ end: _end, ...s }) => s as StepDefinition),
    };
  }

  /** Validates and returns the definition; throws `INVALID_DEFINITION` listing every problem. */
  build(): WorkflowDefinition {
    return defineWorkflow(this.toJSON());
  }
}

function canLink(step: StepDefinition): boolean {
  return DEFINITION_KINDS[step.kind].links;
}

/**
 * Starts a definition builder for `name` at `version`; `build()` validates and returns the JSON form.
 *
 * @example
 * const order = workflow('order', 1)
 *   .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
 *   .task('charge', { handler: 'chargeCard', retry: { maxAttempts: 3 } })
 *   .human('approve', { timeoutMs: 86_400_000, onTimeout: 'expire' })
 *   .succeed('done', { end: true })
 *   .fail('expire', { error: { message: 'not approved in time' } })
 *   .build();
 */
export function workflow(name: string, version: number, options?: WorkflowOptions): WorkflowBuilder {
  return new WorkflowBuilder(name, version, options);
}
