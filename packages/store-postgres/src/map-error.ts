import { isNetworkError } from '@stepfold/engine';

// SQLSTATEs for a server shutting down, starting up or out of connection slots (class 08 is checked apart).
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);

// Errors node-postgres raises itself when the connection drops or never comes up.
const DRIVER_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error',
  'timeout exceeded when trying to connect',
  'Query read timeout',
];

interface ErrorLike {
  code?: unknown | undefined;
  message?: unknown | undefined;
  errors?: unknown | undefined;
}

/** The SQLSTATE (or Node error code) of `e`, when it has one. */
export function errorCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as ErrorLike).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** True when `e` means the PostgreSQL server is unreachable or going away, so a retry later may succeed. */
export function isUnavailable(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const err = e as ErrorLike;
  const code = errorCode(e);
  if (isNetworkError(e) || (code !== undefined && (SERVER_CODES.has(code) || /^08...$/.test(code)))) {
    return true;
  }
  if (typeof err.message === 'string' && DRIVER_MESSAGES.some((m) => (err.message as string).includes(m))) {
    return true;
  }
  // Node reports a failed connect to several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError.
  return Array.isArray(err.errors) && err.errors.length > 0 && err.errors.every(isUnavailable);
}
