import { isNetworkError } from '@stepfold/engine';

// ioredis errors meaning "the server could not be reached, or the connection went away".
const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'AbortError', 'ClusterAllFailedError']);

// Messages ioredis rejects commands with while it has no usable connection.
const UNAVAILABLE_MESSAGES = [
  'Connection is closed.',
  "Stream isn't writeable",
  'Command timed out',
  'Socket timeout',
  'Cluster is disconnected',
  'Cluster is disconnecting',
  "Cluster isn't ready",
  'None of startup nodes is available',
  'Failed to refresh slots cache',
];

// Server replies for states that pass: loading the dataset, a long script, failover, cluster resharding.
const UNAVAILABLE_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS|UNBLOCKED)\b/;

interface ClientErrorLike {
  name?: unknown | undefined;
  code?: unknown | undefined;
  message?: unknown | undefined;
  cause?: unknown | undefined;
}

/** True when `e` (or an error it wraps) says Redis is unreachable or transiently unable to serve. */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== 'object' || e === null || depth > 4) return false;
  const err = e as ClientErrorLike;
  if (typeof err.name === 'string' && UNAVAILABLE_NAMES.has(err.name)) return true;
  if (isNetworkError(err)) return true;
  if (typeof err.message === 'string') {
    const message = err.message;
    if (UNAVAILABLE_REPLY.test(message)) return true;
    if (UNAVAILABLE_MESSAGES.some((m) => message.startsWith(m))) return true;
  }
  return isUnavailable(err.cause, depth + 1);
}

/** True when `e` is the server's "no script with this SHA1" reply. */
export function isNoScript(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith('NOSCRIPT');
}
