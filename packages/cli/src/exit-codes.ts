import type { Status } from '@stepfold/engine';

/** Process exit codes: one per kind of failure, so scripts can branch without parsing messages. */
export const EXIT = {
  ok: 0,
  /** Anything not listed below (a driver error the store passed through, a bug). */
  other: 1,
  /** Bad arguments, an unreadable file, a malformed store URL, a `.ts` handlers module. */
  usage: 2,
  notFound: 3,
  /** The instance changed, exists already, or is past its pivot (cancel): VERSION_CONFLICT, ALREADY_EXISTS, PAST_PIVOT. */
  conflict: 4,
  /** The engine or the store refused the data: INVALID_*, SNAPSHOT_TOO_LARGE, INBOX_OVERFLOW. */
  invalid: 5,
  storeUnavailable: 6,
  /** Not registered: UNKNOWN_WORKFLOW, UNKNOWN_VERSION, UNKNOWN_SIGNAL, UNKNOWN_HANDLER, DEFINITION_HASH_MISMATCH. */
  unknown: 7,
  /**
   * The command was accepted but changed nothing: the event did not apply (a finished instance,
   * nothing parked to requeue, already cancelling, a signal id seen before). Not an error: nothing
   * is printed on stderr, but a script can tell it from a change (0).
   */
  unchanged: 8,
} as const;

/** Exit codes of `stepfold run` for a workflow that did not complete (10 and up). */
export const RUN_EXIT: Readonly<Record<Exclude<Status, 'completed'>, number>> = {
  failed: 10,
  cancelled: 11,
  aborted: 12,
  dlq: 13,
  // Left waiting with nothing scheduled (a signal or a human decision that `run` cannot send).
  waiting: 14,
  running: 15,
  compensating: 15,
};

const BY_CODE: Readonly<Record<string, number>> = {
  USAGE: EXIT.usage,
  NOT_FOUND: EXIT.notFound,
  VERSION_CONFLICT: EXIT.conflict,
  ALREADY_EXISTS: EXIT.conflict,
  PAST_PIVOT: EXIT.conflict,
  INVALID_DEFINITION: EXIT.invalid,
  INVALID_EVENT: EXIT.invalid,
  INVALID_SNAPSHOT: EXIT.invalid,
  INVALID_ID: EXIT.invalid,
  INVALID_INPUT: EXIT.invalid,
  SNAPSHOT_TOO_LARGE: EXIT.invalid,
  INBOX_OVERFLOW: EXIT.invalid,
  STORE_UNAVAILABLE: EXIT.storeUnavailable,
  UNKNOWN_WORKFLOW: EXIT.unknown,
  UNKNOWN_VERSION: EXIT.unknown,
  UNKNOWN_SIGNAL: EXIT.unknown,
  UNKNOWN_HANDLER: EXIT.unknown,
  DEFINITION_HASH_MISMATCH: EXIT.unknown,
};

/** The exit code of an acting command: {@link EXIT.ok} when it wrote, {@link EXIT.unchanged} when not. */
export function changeExitCode(changed: boolean): number {
  return changed ? EXIT.ok : EXIT.unchanged;
}

/** A mistake in how the command was called; exits with {@link EXIT.usage}. */
export class UsageError extends Error {
  readonly code = 'USAGE';
}

/** The code printed for an error: a stepfold code, `USAGE`, a driver's own string code, else `ERROR`. */
export function errorCodeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'ERROR';
}

/** The exit code for an error, from the table above. */
export function exitCodeOf(error: unknown): number {
  return BY_CODE[errorCodeOf(error)] ?? EXIT.other;
}

/** The exit code of `stepfold run` for the status the instance ended in. */
export function runExitCode(status: Status): number {
  return status === 'completed' ? EXIT.ok : RUN_EXIT[status];
}
