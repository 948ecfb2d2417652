/** Every stable error code stepfold throws; match on `error.code`, never on the message. */
export type ErrorCode =
  | 'INVALID_DEFINITION'
  | 'INVALID_EVENT'
  | 'INVALID_SNAPSHOT'
  | 'INVALID_ID'
  | 'UNKNOWN_WORKFLOW'
  | 'UNKNOWN_VERSION'
  | 'DEFINITION_HASH_MISMATCH'
  | 'UNKNOWN_HANDLER'
  | 'VERSION_CONFLICT'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'SNAPSHOT_TOO_LARGE'
  | 'STORE_UNAVAILABLE'
  | 'INBOX_OVERFLOW';

/** One problem found while validating input; `path` points into the offending document. */
export interface Issue {
  path: string;
  message: string;
}

/** Options shared by every stepfold error. */
export interface StepfoldErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  issues?: Issue[];
}

/** Base class of all stepfold errors: a stable `code`, whether retrying may help, and the `cause`. */
export class StepfoldError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly retryable: boolean;
  readonly issues: Issue[];

  constructor(code: C, message: string, options: StepfoldErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.issues = options.issues ?? [];
  }
}

function listIssues(issues: Issue[]): string {
  return issues.map((i) => `  - ${i.path || '(root)'}: ${i.message}`).join('\n');
}

/** Input (definition, event, snapshot or id) failed validation; `issues` lists every problem at once. */
export class ValidationError extends StepfoldError<
  'INVALID_DEFINITION' | 'INVALID_EVENT' | 'INVALID_SNAPSHOT' | 'INVALID_ID'
> {
  constructor(
    code: 'INVALID_DEFINITION' | 'INVALID_EVENT' | 'INVALID_SNAPSHOT' | 'INVALID_ID',
    summary: string,
    issues: Issue[],
    cause?: unknown,
  ) {
    super(code, issues.length ? `${summary}:\n${listIssues(issues)}` : summary, { issues, cause });
  }
}

/** A workflow name, version or handler that is not registered, or a definition whose hash changed. */
export class RegistryError extends StepfoldError<
  'UNKNOWN_WORKFLOW' | 'UNKNOWN_VERSION' | 'DEFINITION_HASH_MISMATCH' | 'UNKNOWN_HANDLER'
> {}

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

/** True when `e` is a stepfold error, optionally with the given code. */
export function isStepfoldError<C extends ErrorCode>(e: unknown, code?: C): e is StepfoldError<C> {
  return e instanceof StepfoldError && (code === undefined || e.code === code);
}
