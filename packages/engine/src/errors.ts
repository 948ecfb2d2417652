import { ERROR_KINDS, type ErrorCode, type ErrorKind } from './error-codes.js';

export {
  ERROR_KINDS,
  type ErrorCode,
  type ErrorKind,
  HTTP_STATUS,
  type StepErrorCode,
} from './error-codes.js';

/**
 * Brand every stepfold error carries under a registry symbol, so two copies of the engine in one
 * process (a store adapter resolving its own) still recognise each other's errors.
 */
const BRAND = Symbol.for('stepfold.error');
/** Marks a handler's {@link TaskError}, which is a stepfold error but not one the engine raised. */
const TASK = Symbol.for('stepfold.task-error');

/** One problem found while validating input; `path` points into the offending document. */
export interface Issue {
  path: string;
  message: string;
}

/** Options shared by every stepfold error. */
export interface StepfoldErrorOptions {
  cause?: unknown | undefined;
  retryable?: boolean | undefined;
  issues?: Issue[] | undefined;
}

/**
 * Base class of all stepfold errors: a stable `code`, whether retrying may help, and the `cause`.
 * Recognise one with {@link isStepfoldError} (by code and brand), which also works across copies
 * of the package where `instanceof` does not.
 *
 * @example
 * try {
 *   await store.save(next, current.version);
 * } catch (e) {
 *   if (isStepfoldError(e, 'VERSION_CONFLICT')) return reloadAndRetry();
 *   throw e;
 * }
 */
export class StepfoldError<C extends string = ErrorCode> extends Error {
  readonly code: C;
  readonly retryable: boolean;
  readonly issues: Issue[];

  constructor(code: C, message: string, options: StepfoldErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.issues = options.issues ?? [];
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * Throw from a handler to fail the attempt with a stable `code` (stored in the snapshot, matched by
 * a retry policy's `nonRetryable`), or with `retryable: false` to skip the remaining attempts.
 *
 * @example
 * const charge: Handler = async ({ attempt }) => {
 *   if (declined) throw new TaskError('card declined', { code: 'DECLINED', retryable: false });
 *   return { paymentId: 'P-1' };
 * };
 */
export class TaskError<C extends string = string> extends StepfoldError<C> {
  constructor(message: string, options: { code?: C; retryable?: boolean; cause?: unknown } = {}) {
    super((options.code ?? 'TASK_FAILED') as C, message, {
      retryable: options.retryable ?? true,
      cause: options.cause,
    });
    Object.defineProperty(this, TASK, { value: true });
  }
}

function listIssues(issues: Issue[]): string {
  return issues.map((i) => `  - ${i.path || '(root)'}: ${i.message}`).join('\n');
}

/** Codes of {@link ValidationError}. */
export type ValidationCode =
  | 'INVALID_DEFINITION'
  | 'INVALID_EVENT'
  | 'INVALID_SNAPSHOT'
  | 'INVALID_ID'
  | 'INVALID_INPUT'
  | 'INVALID_OPTIONS'
  | 'INVALID_MIGRATION'
  | 'INVALID_SEARCH_ATTRIBUTE'
  | 'INVALID_QUERY';

/**
 * Input (definition, event, snapshot, id, or data a declared schema refused) failed validation;
 * `issues` lists every problem at once.
 */
export class ValidationError extends StepfoldError<ValidationCode> {
  constructor(code: ValidationCode, summary: string, issues: Issue[], cause?: unknown) {
    super(code, issues.length ? `${summary}:\n${listIssues(issues)}` : summary, { issues, cause });
  }
}

/** A workflow name, version or handler that is not registered, or a definition whose hash changed. */
export class RegistryError extends StepfoldError<
  'UNKNOWN_WORKFLOW' | 'UNKNOWN_VERSION' | 'DEFINITION_HASH_MISMATCH' | 'UNKNOWN_HANDLER' | 'KIND_NOT_LOADED'
> {}

/**
 * A write taken from a wake notice's snapshot found another instance stored under the same version:
 * the notice did not come from the write it claims to (forged or corrupted), so nothing was written.
 */
export class NoticeMismatchError extends StepfoldError<'NOTICE_MISMATCH'> {
  constructor(
    readonly id: string,
    readonly version: number,
  ) {
    super(
      'NOTICE_MISMATCH',
      `instance ${JSON.stringify(id)}: the stored version ${version} is not the snapshot the wake notice carried; nothing written`,
      { retryable: false },
    );
  }
}

/**
 * A save that was to take a flow holder in the same write (`SaveOptions.flow`) found one of its
 * keys full: nothing was written, not even a waiter entry. The runner asks the store's `flow` alone.
 */
export class FlowRefusedError extends StepfoldError<'FLOW_REFUSED'> {
  constructor(
    readonly id: string,
    readonly holder: string,
  ) {
    super('FLOW_REFUSED', `${id}: flow holder ${holder} refused`);
  }
}

/**
 * A typed client (`runner.client(definition)`) met an instance of another workflow or version than
 * its definition's: its snapshot would be typed wrongly, so the call answers nothing and writes nothing.
 */
export class WorkflowMismatchError extends StepfoldError<'WORKFLOW_MISMATCH'> {
  constructor(
    readonly id: string,
    readonly expected: { name: string; version: number },
    readonly found: { name: string; version: number },
  ) {
    super(
      'WORKFLOW_MISMATCH',
      `instance ${JSON.stringify(id)} runs ${found.name} v${found.version}, not the client's ${expected.name} v${expected.version}`,
    );
  }
}

/** A conditional write lost: the stored version is not the expected one. Reload and re-apply. */
export class VersionConflictError extends StepfoldError<'VERSION_CONFLICT'> {
  constructor(
    readonly id: string,
    readonly expectedVersion: number,
    readonly actualVersion: number | null,
  ) {
    super(
      'VERSION_CONFLICT',
      `instance ${JSON.stringify(id)}: expected version ${expectedVersion}, found ${actualVersion ?? 'none'}`,
      { retryable: true },
    );
  }
}

/** The instance does not exist. */
export class NotFoundError extends StepfoldError<'NOT_FOUND'> {
  constructor(readonly id: string) {
    super('NOT_FOUND', `instance ${JSON.stringify(id)} not found`);
  }
}

/** An instance with this id already exists (and reuse was not requested or not allowed). */
export class AlreadyExistsError extends StepfoldError<'ALREADY_EXISTS'> {
  constructor(readonly id: string) {
    super('ALREADY_EXISTS', `instance ${JSON.stringify(id)} already exists`);
  }
}

/** The serialized snapshot exceeds what the store's backend accepts; nothing was written. */
export class SnapshotTooLargeError extends StepfoldError<'SNAPSHOT_TOO_LARGE'> {
  constructor(
    readonly id: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      'SNAPSHOT_TOO_LARGE',
      `snapshot ${JSON.stringify(id)} is ${bytes} bytes, over the limit of ${limit}`,
    );
  }
}

/** The backing database could not be reached or failed transiently; retrying later may succeed. */
export class StoreUnavailableError extends StepfoldError<'STORE_UNAVAILABLE'> {
  constructor(message: string, cause?: unknown) {
    super('STORE_UNAVAILABLE', message, { cause, retryable: true });
  }
}

/** A signal arrived while the instance's bounded inbox was full; nothing was written. */
export class InboxOverflowError extends StepfoldError<'INBOX_OVERFLOW'> {
  constructor(
    readonly id: string,
    readonly limit: number,
  ) {
    super(
      'INBOX_OVERFLOW',
      `instance ${JSON.stringify(id)}: signal inbox is full (${limit} buffered signals)`,
    );
  }
}

/**
 * A signal sent with `rejectFinished` to an instance that has finished (`status` says how):
 * no event applies to it any more, so nothing was written.
 */
export class InstanceFinishedError extends StepfoldError<'INSTANCE_FINISHED'> {
  constructor(
    readonly id: string,
    // The finished statuses, spelled out: errors.ts imports nothing (snapshot.ts imports it).
    readonly status: 'completed' | 'failed' | 'cancelled' | 'aborted',
  ) {
    super(
      'INSTANCE_FINISHED',
      `instance ${JSON.stringify(id)} has finished (${status}); nothing was written`,
    );
  }
}

/** A signal whose name no step of the instance's definition listens for; nothing was written. */
export class UnknownSignalError extends StepfoldError<'UNKNOWN_SIGNAL'> {
  constructor(
    readonly id: string,
    readonly signal: string,
    readonly known: readonly string[],
  ) {
    const listens = known.length
      ? `it listens for ${known.map((k) => JSON.stringify(k)).join(', ')}`
      : 'it listens for none';
    super(
      'UNKNOWN_SIGNAL',
      `instance ${JSON.stringify(id)}: no step listens for signal ${JSON.stringify(signal)} (${listens}; set acceptUnknownSignals on the definition to buffer such signals)`,
    );
  }
}

/**
 * A stream append (or `begin`) by an attempt of a step after a newer attempt of that step began on
 * the instance's stream: the older attempt is a zombie, and nothing was written.
 */
export class StreamFencedError extends StepfoldError<'STREAM_FENCED'> {
  constructor(
    readonly id: string,
    readonly step: string,
    readonly attempt: number,
    readonly newer: number,
  ) {
    super(
      'STREAM_FENCED',
      `instance ${JSON.stringify(id)}: attempt ${attempt} of step ${JSON.stringify(step)} cannot stream, attempt ${newer} began; nothing written`,
      { retryable: false },
    );
  }
}

/**
 * A handler wrote to `ctx.stream` through a runner whose store has no `stream` capability: give the
 * runner a store that has one (all five of stepfold's stores do).
 */
export class StreamUnsupportedError extends StepfoldError<'STREAM_UNSUPPORTED'> {
  constructor(
    readonly id: string,
    readonly step: string,
  ) {
    super(
      'STREAM_UNSUPPORTED',
      `instance ${JSON.stringify(id)}: step ${JSON.stringify(step)} wrote to ctx.stream, and the runner's store has no stream`,
      { retryable: false },
    );
  }
}

/**
 * True when `e` is an error the engine raised (with the given code, when one is passed). Checks the
 * brand and the code, not the class, so an error from another copy of the engine counts too. A
 * handler's {@link TaskError} is not one: recognise it with {@link isTaskError}.
 */
export function isStepfoldError<C extends ErrorCode = ErrorCode>(
  e: unknown,
  code?: C,
): e is StepfoldError<C> {
  if (typeof e !== 'object' || e === null) return false;
  const marks = e as Record<symbol, unknown>;
  if (marks[BRAND] !== true || marks[TASK] === true) return false;
  const found = (e as { code?: unknown }).code;
  return typeof found === 'string' && (code === undefined || found === code);
}

/** True when `e` is a {@link TaskError} (from any copy of the engine). */
export function isTaskError(e: unknown): e is TaskError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[TASK] === true;
}

/**
 * How a thrown value is recorded as a failed attempt: its message, and the `code` and `retryable`
 * it carries (a {@link TaskError}'s, or any error's own string `code` / boolean `retryable`). The
 * runner and the testing harness both use this, so a handler's failure reads the same in each.
 */
export function failureOf(e: unknown): { message: string; code?: string; retryable?: boolean } {
  const err = (typeof e === 'object' && e !== null ? e : {}) as {
    message?: unknown | undefined;
    code?: unknown | undefined;
    retryable?: unknown | undefined;
  };
  const out: { message: string; code?: string; retryable?: boolean } = {
    message: typeof err.message === 'string' ? err.message : String(e),
  };
  if (typeof err.code === 'string') out.code = err.code;
  if (typeof err.retryable === 'boolean') out.retryable = err.retryable;
  return out;
}

/**
 * `cancel` of an instance whose pivot step has completed: what the pivot did cannot be undone, so
 * nothing rolls back any more; nothing was written. `abort` still stops it, or it finishes forward.
 */
export class PastPivotError extends StepfoldError<'PAST_PIVOT'> {
  constructor(
    readonly id: string,
    readonly pivot: string,
  ) {
    super(
      'PAST_PIVOT',
      `instance ${JSON.stringify(id)}: pivot step ${JSON.stringify(pivot)} has completed, so cancel cannot roll it back (abort the instance, or let it finish forward)`,
      { retryable: false },
    );
  }
}

/**
 * The {@link ErrorKind} of an error the engine raised (from any copy of it), else undefined: a
 * handler's {@link TaskError}, a driver's error, a code this copy does not know.
 */
export function errorKind(e: unknown): ErrorKind | undefined {
  return isStepfoldError(e) && Object.hasOwn(ERROR_KINDS, e.code) ? ERROR_KINDS[e.code] : undefined;
}

/**
 * A signal sent on condition that a step waits (`ifWaiting`, as a callback token's is) met an
 * instance where that step does not wait at that iteration: it ended, or is not entered yet.
 */
export class StepNotWaitingError extends StepfoldError<'STEP_NOT_WAITING'> {
  constructor(
    readonly instanceId: string,
    readonly step: string,
    why: string,
  ) {
    super(
      'STEP_NOT_WAITING',
      `${instanceId}: step ${step} is not waiting for this signal (${why}); nothing written`,
    );
  }
}
