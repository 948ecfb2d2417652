import { ValidationError } from '../errors.js';
import { assertValidId } from '../ids.js';

/**
 * The routes of stepfold's HTTP API, as the Lambda and Workers packages serve it:
 *
 *   POST /workflows/:name/instances/:id            start           → 201 snapshot
 *   POST /instances/:id/signals/:name              signal (or a human step's decision)
 *   POST /instances/:id/cancel | /abort            cancel or abort
 *   GET  /instances/:id                            read
 *   POST /callbacks/:token                         a callback token's signal (`runner.callback`)
 *
 * Parsing a request's method and path is pure: the same function serves every platform.
 */

/** What a request to the HTTP API asks for, its ids percent-decoded and checked. */
export type HttpRoute =
  | { kind: 'start'; workflow: string; id: string }
  | { kind: 'signal'; id: string; name: string }
  | { kind: 'cancel' | 'abort'; id: string }
  | { kind: 'get'; id: string }
  | { kind: 'callback'; token: string };

/** A request the HTTP API has no answer for: no such path (404) or another method wanted (405). */
export type HttpRouteMiss =
  | { kind: 'no-route'; status: 404; code: 'NO_ROUTE'; message: string }
  | {
      kind: 'method-not-allowed';
      status: 405;
      code: 'METHOD_NOT_ALLOWED';
      /** The method the path takes (an `Allow` header's value). */
      allow: 'GET' | 'POST';
      message: string;
    };

/** Options of {@link parseHttpRoute}. */
export interface HttpRouteOptions {
  /** A path the API is served under, such as `/api`: a path outside it is `NO_ROUTE`. */
  basePath?: string | undefined;
  /**
   * Whether this deployment runs a workflow (default: every name). A start of one it does not run
   * is a path to nothing (`NO_ROUTE`, 404), not the engine's `UNKNOWN_WORKFLOW`, which is a
   * deployment fault (500).
   */
  serves?: ((workflow: string) => boolean) | undefined;
}

/** Whether a parse found a route (rather than a 404 or 405). */
export function isHttpRoute(r: HttpRoute | HttpRouteMiss): r is HttpRoute {
  return r.kind !== 'no-route' && r.kind !== 'method-not-allowed';
}

/** The path's segments after `basePath`, percent-decoded; null when it lies outside `basePath`. */
function segments(path: string, basePath: string | undefined): string[] | null {
  const base = (basePath ?? '').replace(/\/+$/, '');
  let rest = path;
  if (base) {
    if (!rest.startsWith(`${base}/`)) return null;
    rest = rest.slice(base.length);
  }
  const parts = rest.split('/');
  if (parts[0] === '') parts.shift();
  // One trailing slash names the same resource (`/instances/o-1/`).
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  try {
    return parts.map(decodeURIComponent);
  } catch {
    throw new ValidationError('INVALID_ID', 'malformed percent-encoding in the path', [
      { path: 'path', message: path },
    ]);
  }
}

/**
 * Parses a request of the HTTP API: `method` (any case) and `path` (the URL's pathname, ids
 * percent-encoded) to the {@link HttpRoute} it names, or the {@link HttpRouteMiss} to answer.
 * Throws `INVALID_ID` (400) for an id, workflow name or signal name that is not a valid id, or a
 * path whose percent-encoding is malformed.
 *
 * @example
 * const r = parseHttpRoute('POST', '/instances/o-1/signals/approve');
 * if (!isHttpRoute(r)) return json(r.status, { error: { code: r.code, message: r.message } });
 */
export function parseHttpRoute(
  method: string,
  path: string,
  options: HttpRouteOptions = {},
): HttpRoute | HttpRouteMiss {
  const verb = method.toUpperCase();
  const noRoute: HttpRouteMiss = {
    kind: 'no-route',
    status: 404,
    code: 'NO_ROUTE',
    message: `no route for ${verb} ${path}`,
  };
  const parts = segments(path, options.basePath);
  if (parts === null || parts.length < 2 || parts.length > 4) return noRoute;
  const [a, b, c, d] = parts as [string, string, string | undefined, string | undefined];
  // The shape first, then the method, then the names: the order a reader checks a request in.
  let shape: 'start' | 'get' | 'signal' | 'cancel' | 'abort' | 'callback' | undefined;
  if (a === 'callbacks' && c === undefined) shape = 'callback';
  else if (a === 'workflows' && c === 'instances' && d !== undefined) shape = 'start';
  else if (a === 'instances' && c === undefined) shape = 'get';
  else if (a === 'instances' && c === 'signals' && d !== undefined) shape = 'signal';
  else if (a === 'instances' && (c === 'cancel' || c === 'abort') && d === undefined) shape = c;
  if (shape === undefined) return noRoute;
  const allow = shape === 'get' ? 'GET' : 'POST';
  if (verb !== allow) {
    return {
      kind: 'method-not-allowed',
      status: 405,
      code: 'METHOD_NOT_ALLOWED',
      allow,
      message: `use ${allow} for ${path}`,
    };
  }
  // A token is checked by its signature (runner.callback), not as an id: it is longer and has dots.
  if (shape === 'callback') return { kind: 'callback', token: b };
  let route: Exclude<HttpRoute, { kind: 'callback' }>;
  switch (shape) {
    case 'start':
      assertValidId(b, 'workflow name');
      if (!(options.serves?.(b) ?? true)) return noRoute;
      route = { kind: 'start', workflow: b, id: d! };
      break;
    case 'signal':
      assertValidId(d, 'signal name');
      route = { kind: 'signal', id: b, name: d };
      break;
    case 'get':
    case 'cancel':
    case 'abort':
      route = { kind: shape, id: b };
      break;
  }
  assertValidId(route.id, 'instance id');
  return route;
}
