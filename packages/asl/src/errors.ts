import { ValidationError } from '@stepfold/engine';

/** Why a state machine was refused at import: a feature not supported, or a definition AWS would refuse too. */
export type AslImportReason = 'unsupported' | 'invalid';

/**
 * A state machine `fromAsl` refuses, naming the state and the field (`INVALID_DEFINITION`, so
 * tools treat it as any bad definition). Nothing runs a definition it could not import exactly.
 */
export class AslImportError extends ValidationError {
  constructor(
    readonly reason: AslImportReason,
    /** The state's path from the top (`Map1/Inner`), or `''` for the machine itself. */
    readonly state: string,
    /** The field refused (`Resource`, `Retry[0].JitterStrategy`, ...). */
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_DEFINITION', `state machine not imported (${reason})`, [
      { path: state === '' ? field : `${state}.${field}`, message: detail },
    ]);
  }
}

/**
 * An ASL error raised while a state runs (`States.Runtime`, `States.TaskFailed`, a Lambda's error
 * type, a Fail state's Error): `error` is the name Retry and Catch match, `causeText` its cause. Thrown
 * from a handler it fails the step with `code` = error and `message` = cause.
 */
export class AslRuntimeError extends Error {
  override readonly name = 'AslRuntimeError';
  /** The ASL error name (`null` for a Fail state without one), as the snapshot's error code. */
  readonly code: string | undefined;
  readonly retryable = false;

  constructor(
    readonly error: string | null,
    /** The cause text (`null` when the state gave none). */
    readonly causeText: string | null,
  ) {
    super(causeText ?? '');
    this.code = error ?? undefined;
  }
}
