// Driver errors meaning "the server could not be reached or is going away": retrying later may succeed.
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
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
  if (typeof err.code === 'number' && UNAVAILABLE_CODES.has(err.code)) return true;
  return typeof err.hasErrorLabel === 'function' && err.hasErrorLabel('RetryableWriteError');
}

/** True when `e` is a duplicate-key error (code 11000). */
export function isDuplicateKey(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as DriverErrorLike).code === 11000;
}
