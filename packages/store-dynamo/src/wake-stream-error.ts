import type { TableDescription } from '@aws-sdk/client-dynamodb';
import { StepfoldError } from '@stepfold/engine';

/**
 * The table has no stream wake notices can read: none, or one without new images. Thrown by
 * `store.wakes.subscribe` (a worker then polls, and subscribes again on its outage schedule) and by
 * `setup` with `streams` on a table whose stream has another view type. Not retryable: the table's
 * configuration must change (`setup` with the `streams` option enables it).
 *
 * @example
 * if (isStepfoldError(e, 'NO_WAKE_STREAM')) await store.setup(); // a store made with `streams`
 */
export class WakeStreamError extends StepfoldError<'NO_WAKE_STREAM'> {
  /** The table named. */
  readonly table: string;

  constructor(table: string, message: string) {
    super('NO_WAKE_STREAM', message);
    this.table = table;
  }

  /** For a table whose stream is off, or of a view type without new images. */
  static viewType(table: string, described: TableDescription | undefined): WakeStreamError {
    const spec = described?.StreamSpecification;
    return new WakeStreamError(
      table,
      spec?.StreamEnabled
        ? `DynamoDB table ${table} has a ${spec.StreamViewType} stream; wake notices need NEW_IMAGE (or NEW_AND_OLD_IMAGES)`
        : `DynamoDB table ${table} has no stream; run setup with the streams option (or enable a NEW_IMAGE stream)`,
    );
  }
}
