// The codes of the errors stepfold throws and records, what kind of failure each is, and the HTTP
// status of each kind: the one table every error class (errors.ts and the entries' own) and the
// CLI's exit codes read. Types and two constant tables, nothing else.

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
