import { isNetworkError } from '@stepfold/engine';

// Driver errors meaning "the server could not be reached or is going away": retrying later may succeed.
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  // The driver's pool cleared by a server monitor timeout (a stalled network): it fails the
  // operations in flight with this subclass of MongoPoolClearedError, under a name of its own.
  'PoolClearedOnNetworkError',
  'MongoServerClosedError',
]);

// Server codes for shutdown, step-down and "not primary" states (the driver's own retryable set).
const UNAVAILABLE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

interface DriverErrorLike {
  name?: unknown | undefined;
  code?: unknown | undefined;
  hasErrorLabel?: ((label: string) => boolean) | undefined;
}

/** True when `e` says the MongoDB server is unreachable or transiently unable to serve. */
export function isUnavailable(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as DriverErrorLike;
  if (typeof err.name === 'string' && UNAVAILABLE_NAMES.has(err.name)) return true;
  // A socket error the driver lets through unwrapped (mongodb 6 does, from a write to a connection
  // reset under it: `Error: write ECONNRESET`), as every other store treats it.
  if (isNetworkError(e)) return true;
  if (typeof err.code === 'number' && UNAVAILABLE_CODES.has(err.code)) return true;
  // PoolRequstedRetry (the driver's spelling): the pool was cleared under the operation, which a
  // retry on a fresh connection may complete.
  return (
    typeof err.hasErrorLabel === 'function' &&
    (err.hasErrorLabel('RetryableWriteError') || err.hasErrorLabel('PoolRequstedRetry'))
  );
}

/** True when `e` is a duplicate-key error (code 11000). */
export function isDuplicateKey(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as DriverErrorLike).code === 11000;
}
