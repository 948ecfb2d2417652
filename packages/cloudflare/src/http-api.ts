/**
 * The HTTP API both halves share: the Worker parses a request's path to find the instance's Durable
 * Object, and the object parses it again to know what to do. Errors become
 * `{ error: { code, message, issues? } }` with the status of the engine error's kind.
 *
 *   POST /workflows/:name/instances/:id             body = input     → 201 snapshot
 *   POST /instances/:id/signals/:name[?signalId=…]  body = data      → 200 snapshot
 *   POST /instances/:id/cancel | /abort             body = { reason? } → 200 snapshot
 *   GET  /instances/:id                                              → 200 snapshot
 */
import { assertValidId, errorKind, HTTP_STATUS, isStepfoldError, ValidationError } from '@stepfold/engine';

/** An error of the HTTP layer itself: no such route (`NO_ROUTE`, 404) or a wrong method (405). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: 'NO_ROUTE' | 'METHOD_NOT_ALLOWED',
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** What a request asks for, its ids checked. */
export type Route =
  | { kind: 'start'; id: string; workflow: string }
  | { kind: 'signal'; id: string; name: string; signalId?: string }
  | { kind: 'cancel' | 'abort'; id: string }
  | { kind: 'get'; id: string };

/**
 * Parses `path` (after any prefix; ids are percent-encoded segments) for `method`. `serves` says
 * whether this deployment runs a workflow: one it does not is a path to nothing (`NO_ROUTE`, 404),
 * not the engine's `UNKNOWN_WORKFLOW`, which is a deployment fault (500).
 */
export function parseRoute(
  method: string,
  path: string,
  search: URLSearchParams,
  serves: (workflow: string) => boolean,
): Route {
  let parts: string[];
  try {
    parts = path.split('/').slice(1).map(decodeURIComponent);
  } catch {
    throw new ValidationError('INVALID_ID', 'malformed percent-encoding in the path', [
      { path: 'path', message: path },
    ]);
  }
  const expect = (m: string) => {
    if (method !== m) throw new HttpError(405, 'METHOD_NOT_ALLOWED', `use ${m} for ${path}`);
  };
  const [a, b, c, d, ...rest] = parts;
  let r: Route | undefined;
  if (rest.length === 0 && a === 'workflows' && c === 'instances' && b !== undefined && d !== undefined) {
    expect('POST');
    assertValidId(b, 'workflow name');
    if (serves(b)) r = { kind: 'start', workflow: b, id: d };
  } else if (rest.length === 0 && a === 'instances' && b !== undefined) {
    if (c === undefined) {
      expect('GET');
      r = { kind: 'get', id: b };
    } else if (c === 'signals' && d !== undefined) {
      expect('POST');
      assertValidId(d, 'signal name');
      const signalId = search.get('signalId');
      if (signalId !== null) assertValidId(signalId, 'signalId');
      r = { kind: 'signal', id: b, name: d, ...(signalId === null ? {} : { signalId }) };
    } else if ((c === 'cancel' || c === 'abort') && d === undefined) {
      expect('POST');
      r = { kind: c, id: b };
    }
  }
  if (!r) throw new HttpError(404, 'NO_ROUTE', `no route for ${method} ${path}`);
  assertValidId(r.id, 'instance id');
  return r;
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
  if (e instanceof HttpError) return jsonResponse(e.status, { error: { code: e.code, message: e.message } });
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
