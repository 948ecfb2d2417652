import { isNetworkError } from '@stepfold/engine';

// Service errors that mean "try again later" rather than "your request is wrong".
const UNAVAILABLE_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);

interface SdkErrorLike {
  name?: unknown | undefined;
  code?: unknown | undefined;
  cause?: unknown | undefined;
  errors?: unknown | undefined;
  $retryable?: unknown | undefined;
  $metadata?: { httpStatusCode?: unknown } | undefined;
}

/** True when `e` (or an error it wraps) says DynamoDB could not be reached or is transiently failing. */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== 'object' || e === null || depth > 4) return false;
  const err = e as SdkErrorLike;
  if (typeof err.name === 'string' && UNAVAILABLE_NAMES.has(err.name)) return true;
  if (isNetworkError(err)) return true;
  if (err.$retryable) return true;
  const status = err.$metadata?.httpStatusCode;
  if (typeof status === 'number' && status >= 500) return true;
  if (Array.isArray(err.errors) && err.errors.some((x) => isUnavailable(x, depth + 1))) return true;
  return isUnavailable(err.cause, depth + 1);
}

/** True when `e` is DynamoDB's "the ConditionExpression did not hold". */
export function isConditionFailed(e: unknown): boolean {
  return (
    typeof e === 'object' && e !== null && (e as SdkErrorLike).name === 'ConditionalCheckFailedException'
  );
}

/** True when DynamoDB refused a write (or a transaction's write) because the item would exceed 400 KB. */
export function isItemTooLarge(e: unknown): boolean {
  const err = e as SdkErrorLike & { message?: unknown };
  if (typeof e !== 'object' || e === null) return false;
  if (err.name === 'TransactionCanceledException')
    return cancelReasons(e).some(
      (r) => r.Code === 'ValidationError' && /item size.*exceeded/i.test(r.Message ?? ''),
    );
  return (
    err.name === 'ValidationException' &&
    typeof err.message === 'string' &&
    /item size.*exceeded/i.test(err.message)
  );
}

/** One write's reason in a cancelled transaction: `None`, `ConditionalCheckFailed`, `TransactionConflict`, … */
export interface CancelReason {
  Code?: string | undefined;
  Message?: string | undefined;
}

/** The reasons of a cancelled transaction, one per write in its order (empty for any other error). */
export function cancelReasons(e: unknown): CancelReason[] {
  if (typeof e !== 'object' || e === null || (e as SdkErrorLike).name !== 'TransactionCanceledException')
    return [];
  return (e as { CancellationReasons?: CancelReason[] }).CancellationReasons ?? [];
}

/** `write`'s result, or null when DynamoDB refused it for its condition (or for `also`). */
export async function conditional<T>(write: Promise<T>, also?: (e: unknown) => boolean): Promise<T | null> {
  try {
    return await write;
  } catch (e) {
    if (isConditionFailed(e) || also?.(e)) return null;
    throw e;
  }
}
