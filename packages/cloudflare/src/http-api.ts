/**
 * The HTTP API both halves share: the Worker parses a request's path to find the instance's Durable
 * Object, and the object parses it again to know what to do. Errors become
 * `{ error: { code, message, issues? } }` with the status of the engine error's kind. The routes are
 * the engine's (`parseHttpRoute`), the same as the Lambda package's.
 *
 *   POST /workflows/:name/instances/:id             body = input     → 201 snapshot
 *   POST /instances/:id/signals/:name[?signalId=…]  body = data      → 200 snapshot (409 once finished)
 *   POST /instances/:id/cancel | /abort             body = { reason? } → 200 snapshot
 *   GET  /instances/:id                                              → 200 snapshot
 */
import {
  assertValidId,
  callbackInstance,
  errorKind,
  HTTP_STATUS,
  type HttpRoute,
  isHttpRoute,
  isStepfoldError,
  parseHttpRoute,
  ValidationError,
} from '@stepfold/engine';

/** An error of the HTTP layer itself: no such route (`NO_ROUTE`, 404) or a wrong method (405). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: 'NO_ROUTE' | 'METHOD_NOT_ALLOWED',
    message: string,
    /** The method the path takes, for a 405's `Allow` header. */
    readonly allow?: string | undefined,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** What a request asks for, its ids checked: the engine's route, with a signal's `signalId` and a start's `priority`. */
export type Route =
  | Exclude<HttpRoute, { kind: 'signal' | 'start' | 'callback' }>
  | (Extract<HttpRoute, { kind: 'signal' }> & { signalId?: string })
  | (Extract<HttpRoute, { kind: 'start' }> & { priority?: number })
  // The instance a callback token names, unchecked: the object it routes to checks the token.
  | (Extract<HttpRoute, { kind: 'callback' }> & { id: string });

/**
 * Parses `path` (after any prefix; ids are percent-encoded segments) for `method` with the
 * engine's `parseHttpRoute`, a signal's `signalId` and a start's `priority` from `search` (a
 * priority that is no number reaches the runner as NaN, which refuses it with `INVALID_OPTIONS`). `serves` says whether this
 * deployment runs a workflow: one it does not is a path to nothing (`NO_ROUTE`, 404), not the
 * engine's `UNKNOWN_WORKFLOW`, which is a deployment fault (500). A miss is thrown as an
 * {@link HttpError}; an invalid id as the engine's `INVALID_ID`.
 */
export function parseRoute(
  method: string,
  path: string,
  search: URLSearchParams,
  serves: (workflow: string) => boolean,
): Route {
  const r = parseHttpRoute(method, path, { serves });
  if (!isHttpRoute(r)) {
    throw new HttpError(r.status, r.code, r.message, r.kind === 'method-not-allowed' ? r.allow : undefined);
  }
  if (r.kind === 'callback') return { ...r, id: callbackInstance(r.token) };
  if (r.kind === 'start') {
    const priority = search.get('priority');
    return priority === null ? r : { ...r, priority: priority.trim() === '' ? Number.NaN : Number(priority) };
  }
  if (r.kind !== 'signal') return r;
  const signalId = search.get('signalId');
  if (signalId === null) return r;
  assertValidId(signalId, 'signalId');
  return { ...r, signalId };
}

/** The request body as JSON; an empty body is `undefined`. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ValidationError('INVALID_EVENT', 'request body is not valid JSON', [
      { path: 'body', message: (e as Error).message },
    ]);
  }
}

/** `{ reason? }` of a cancel or abort body. */
export async function readReason(request: Request): Promise<string | undefined> {
  const body = await readJson(request);
  if (body === undefined) return undefined;
  const reason = (body as { reason?: unknown } | null)?.reason;
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    (reason !== undefined && typeof reason !== 'string')
  ) {
    throw new ValidationError('INVALID_EVENT', 'body must be { reason?: string }', [
      { path: 'body.reason', message: 'must be a string' },
    ]);
  }
  return reason;
}

/** A JSON response. */
export const jsonResponse = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The response for a thrown error: the engine's stable code with its kind's status
 * (`HTTP_STATUS`), the HTTP layer's own codes, or 500 `INTERNAL` (logged) for anything else.
 */
export function errorResponse(e: unknown): Response {
  if (e instanceof HttpError) {
    const res = jsonResponse(e.status, { error: { code: e.code, message: e.message } });
    if (e.allow) res.headers.set('allow', e.allow);
    return res;
  }
  if (isStepfoldError(e)) {
    const kind = errorKind(e);
    return jsonResponse(kind === undefined ? 500 : HTTP_STATUS[kind], {
      error: { code: e.code, message: e.message, ...(e.issues.length ? { issues: e.issues } : {}) },
    });
  }
  // Anything else is a fault of this deployment: logged in full, answered without its details.
  console.error('stepfold: unexpected error', e);
  return jsonResponse(500, { error: { code: 'INTERNAL', message: 'internal error (see the Worker logs)' } });
}
