/** Every stable error code stepfold throws; match on `error.code`, never on the message. */
export type ErrorCode =
  | 'INVALID_DEFINITION'
  | 'INVALID_EVENT'
  | 'INVALID_SNAPSHOT'
  | 'INVALID_ID'
  | 'INVALID_INPUT'
  | 'INVALID_OPTIONS'
  | 'UNKNOWN_WORKFLOW'
  | 'UNKNOWN_VERSION'
  | 'DEFINITION_HASH_MISMATCH'
  | 'UNKNOWN_HANDLER'
  | 'KIND_NOT_LOADED'
  | 'VERSION_CONFLICT'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'SNAPSHOT_TOO_LARGE'
  | 'STORE_UNAVAILABLE'
  | 'INBOX_OVERFLOW'
  | 'UNKNOWN_SIGNAL'
  | 'PAST_PIVOT'
  | 'NOTICE_MISMATCH'
  | 'WORKFLOW_MISMATCH'
  | 'INVALID_MIGRATION'
  | 'MIGRATION_REFUSED'
  | 'PAYLOAD_TOO_LARGE'
  | 'PAYLOAD_NOT_FOUND'
  | 'NO_WAKE_STREAM'
  | 'INSTANCE_FINISHED'
  | 'STREAM_FENCED'
  | 'HEARTBEAT_TOO_LARGE'
  | 'CALLBACK_INVALID'
  | 'CALLBACK_EXPIRED'
  | 'STEP_NOT_WAITING'
  | 'STREAM_UNSUPPORTED'
  | 'INVALID_SEARCH_ATTRIBUTE'
  | 'INVALID_QUERY'
  | 'CODEC_KEY_MISSING'
  | 'CODEC_DECRYPT_FAILED'
  | 'FLOW_REFUSED';

/**
 * What kind of failure an {@link ErrorCode} is: what the caller should do about it. Exit codes and
 * HTTP statuses derive from the kind ({@link ERROR_KINDS}, {@link HTTP_STATUS}), so they cannot
 * disagree; each member says why its codes belong together.
 */
export type ErrorKind =
  /** The data is malformed or a rule or schema refuses it: fix it, as sending it again fails again. */
  | 'invalid'
  /** No instance with that id. */
  | 'not-found'
  /** Another writer saved first: reload and re-apply (the runner does), so it is retryable. */
  | 'conflict'
  /** The instance's state or a limit refuses the command (it exists, is past its pivot, is full); nothing was written. */
  | 'refused'
  /** The registered definitions do not cover the request: the deployment must change, not the request. */
  | 'definition'
  /** The store failed transiently: the same call later may succeed, so it is retryable. */
  | 'unavailable';

/** The kind of each error code; a new {@link ErrorCode} does not compile until it has its row here. */
export const ERROR_KINDS: Readonly<Record<ErrorCode, ErrorKind>> = {
  INVALID_DEFINITION: 'invalid',
  INVALID_EVENT: 'invalid',
  INVALID_SNAPSHOT: 'invalid',
  INVALID_ID: 'invalid',
  INVALID_INPUT: 'invalid',
  // A constructor's options break a rule its types cannot always see (a value passed where a wrapper is due).
  INVALID_OPTIONS: 'invalid',
  // A name the caller sent that no step listens for: the caller's mistake, like a bad event.
  UNKNOWN_SIGNAL: 'invalid',
  // A migration whose step map or data recipe cannot be applied to the versions it names.
  INVALID_MIGRATION: 'invalid',
  // A search attribute a definition does not declare, or a value of another type than declared.
  INVALID_SEARCH_ATTRIBUTE: 'invalid',
  // A `list` query whose `where` or `orderBy` is malformed (an unknown operator, a value no attribute holds).
  INVALID_QUERY: 'invalid',
  NOT_FOUND: 'not-found',
  // A reference in a snapshot whose payload is gone from the payload store (or fails its hash).
  PAYLOAD_NOT_FOUND: 'not-found',
  VERSION_CONFLICT: 'conflict',
  ALREADY_EXISTS: 'refused',
  PAST_PIVOT: 'refused',
  // A wake notice described an instance that is not stored: nothing written, and retrying cannot help.
  NOTICE_MISMATCH: 'refused',
  // A typed client's definition is not the one the instance runs: its command is refused unapplied.
  WORKFLOW_MISMATCH: 'refused',
  INBOX_OVERFLOW: 'refused',
  // A signal sent (with `rejectFinished`) to an instance that has finished: nothing can apply it.
  INSTANCE_FINISHED: 'refused',
  // The instance's state (a step the new version has no place for) refuses the move; nothing written.
  MIGRATION_REFUSED: 'refused',
  // A newer attempt of the step began streaming: this (older) attempt's chunks would be superseded.
  STREAM_FENCED: 'refused',
  // A save that was to take a flow holder found a key of it full: nothing written (the runner asks again alone).
  FLOW_REFUSED: 'refused',
  // A handler's heartbeat details over `HEARTBEAT_DETAILS_MAX_BYTES`: kept in the snapshot, they must stay small.
  HEARTBEAT_TOO_LARGE: 'refused',
  // A callback token that is malformed, signed by a key the runner does not hold, or forged.
  CALLBACK_INVALID: 'invalid',
  // A good callback token past its expiry: nothing is written.
  CALLBACK_EXPIRED: 'refused',
  // A signal (a callback's) sent on condition that a step waits, to an instance where it does not
  // (any more, or not yet): nothing is written.
  STEP_NOT_WAITING: 'refused',
  // Over the payload store's own limit, whatever the threshold.
  PAYLOAD_TOO_LARGE: 'refused',
  // The instance would outgrow the store's limit, whatever the size of the request itself.
  SNAPSHOT_TOO_LARGE: 'refused',
  // A stored value is encrypted with a key the codec does not hold: the deployment must give it.
  CODEC_KEY_MISSING: 'definition',
  // A stored value does not decrypt with the key its id names (a wrong key, or altered text).
  CODEC_DECRYPT_FAILED: 'invalid',
  UNKNOWN_WORKFLOW: 'definition',
  UNKNOWN_VERSION: 'definition',
  UNKNOWN_HANDLER: 'definition',
  KIND_NOT_LOADED: 'definition',
  // The instance pinned other content under this version: a deployment fault, not a race to retry.
  DEFINITION_HASH_MISMATCH: 'definition',
  // A store's table has no change stream its wake notices can read: the deployment must change.
  NO_WAKE_STREAM: 'definition',
  // A handler streamed through a runner whose store has no stream: the deployment must change.
  STREAM_UNSUPPORTED: 'definition',
  STORE_UNAVAILABLE: 'unavailable',
};

/** The HTTP status of each {@link ErrorKind}, for an API that answers with the engine's errors. */
export const HTTP_STATUS = {
  invalid: 400,
  'not-found': 404,
  conflict: 409,
  // The instance's state, not the request's form, is what refuses: a conflict with it.
  refused: 409,
  // Only an operator can fix it (register the version, deploy the handler); a 5xx alerts them.
  definition: 500,
  unavailable: 503,
} as const satisfies Record<ErrorKind, number>;

/**
 * Codes the engine itself records in a snapshot's `error` (a step's or the instance's). A handler's
 * failure keeps the code it threw (a `TaskError` without one records `TASK_FAILED`).
 */
export type StepErrorCode =
  /** A handler threw a `TaskError` without a code. */
  | 'TASK_FAILED'
  /** A handler missed its deadline, or a wait or human step its `timeoutMs`. */
  | 'TIMEOUT'
  /** A running attempt's lease lapsed before its deadline: its runner stopped renewing it (it died). */
  | 'LEASE_LOST'
  /** A task with `heartbeatMs` sent no heartbeat that long: its handler hung, or its process died. */
  | 'HEARTBEAT_TIMEOUT'
  /** No branch of a choice step matched and it has no `otherwise`. */
  | 'NO_BRANCH_MATCHED'
  /** A sleep's `until` path did not hold a number. */
  | 'INVALID_SLEEP_TARGET'
  /** A human step was rejected. */
  | 'REJECTED'
  /** A fail step without its own code. */
  | 'FAILED'
  /** A handler returned an output its step's declared schema refused. */
  | 'INVALID_OUTPUT'
  /** One event caused more internal transitions than allowed (a runaway loop). */
  | 'TRANSITION_LIMIT'
  /** A child workflow ended without completing, with no error code of its own. */
  | 'CHILD_FAILED'
  /** A child step's instance id belongs to an instance that is not its child. */
  | 'CHILD_ID_TAKEN'
  /** A map step's `items` path does not hold an array. */
  | 'INVALID_ITEMS'
  /** A flow limit's key path held no string, finite number or boolean (the attempt fails for good). */
  | 'INVALID_FLOW_KEY'
  /** A search attribute read from the step's output held a value of another type than declared. */
  | 'INVALID_SEARCH_ATTRIBUTE';

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
