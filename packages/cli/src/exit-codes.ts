import { type ErrorKind, errorKind, type Status } from '@stepfold/engine';

/**
 * The exit code of each kind of engine error (the engine's `ERROR_KINDS` gives each code its
 * kind), so a script branches on what to do about a failure without parsing messages.
 */
export const KIND_EXIT = {
  'not-found': 3,
  /** ALREADY_EXISTS, PAST_PIVOT, INBOX_OVERFLOW, SNAPSHOT_TOO_LARGE: the instance refuses; nothing was written. */
  refused: 4,
  /** INVALID_*, UNKNOWN_SIGNAL: fix what was sent. */
  invalid: 5,
  /** STORE_UNAVAILABLE: try again later. */
  unavailable: 6,
  /** UNKNOWN_WORKFLOW, UNKNOWN_VERSION, UNKNOWN_HANDLER, DEFINITION_HASH_MISMATCH: fix `--definitions` or `--handlers`. */
  definition: 7,
  // Not 4 with the refusals: a lost race (VERSION_CONFLICT) is worth running again, they are not.
  conflict: 9,
} as const satisfies Record<ErrorKind, number>;

/** Process exit codes: the CLI's own outcomes, then one per kind of engine error ({@link KIND_EXIT}). */
export const EXIT = {
  ok: 0,
  /** Anything not listed below (a driver error the store passed through, a bug). */
  other: 1,
  /** Bad arguments, an unreadable file, a malformed store URL, a `.ts` handlers module. */
  usage: 2,
  /**
   * The command was accepted but changed nothing: the event did not apply (a finished instance,
   * nothing parked to requeue, already cancelling, a signal id seen before). Not an error: nothing
   * is printed on stderr, but a script can tell it from a change (0).
   */
  unchanged: 8,
  ...KIND_EXIT,
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

/** The exit code for an error: {@link EXIT.usage}, its kind's ({@link KIND_EXIT}), else {@link EXIT.other}. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  const kind = errorKind(error);
  return kind === undefined ? EXIT.other : KIND_EXIT[kind];
}

/** The exit code of `stepfold run` for the status the instance ended in. */
export function runExitCode(status: Status): number {
  return status === 'completed' ? EXIT.ok : RUN_EXIT[status];
}
