/**
 * The API Gateway handler (HTTP API payload 2.0 and REST API proxy 1.0). Starts, signals, cancels
 * and aborts are **applied synchronously** by a runner that executes nothing: the answer comes
 * once the event is written (a start is one PutItem), so an accepted start is never lost; the
 * tasks it queued are run by the stream handler, or by the sweep if the stream record is lost.
 *
 *   POST /workflows/:name/instances/:id[?priority=n]  body = input         → 201 snapshot
 *   POST /instances/:id/signals/:name[?signalId=…]  body = payload (a human step's decision too) → 200 snapshot
 *                                                   (409 INSTANCE_FINISHED once the instance has finished)
 *   POST /instances/:id/cancel | /abort            body = { reason? }      → 200 snapshot
 *   GET  /instances/:id                                                     → 200 snapshot
 *
 * The routes are the engine's (`parseHttpRoute`), shared with the Workers package. Errors:
 * `{ error: { code, message, issues? } }`, status from the engine's `HTTP_STATUS` by kind.
 */
import {
  errorKind,
  HTTP_STATUS,
  type HttpRoute,
  type HttpRouteMiss,
  InstanceFinishedError,
  type Issue,
  isHttpRoute,
  isStepfoldError,
  isTerminal,
  NotFoundError,
  parseHttpRoute,
  type Runner,
  type Snapshot,
  ValidationError,
} from '@stepfold/engine';
import type { ApiGatewayEvent, ApiGatewayResult } from './lambda-types.js';
import { type LambdaLog, messageOf } from './log.js';

/** An error of the HTTP layer itself (no such route, wrong method). */
class HttpError extends Error {
  constructor(readonly miss: HttpRouteMiss) {
    super(miss.message);
  }
}

/** The request's method and path (without a named stage's prefix), for either payload version. */
function methodAndPath(event: ApiGatewayEvent): { method: string; path: string } {
  const method = (event.requestContext?.http?.method ?? event.httpMethod ?? 'GET').toUpperCase();
  let path = event.rawPath ?? event.path ?? '/';
  const stage = event.requestContext?.stage;
  // 2.0 keeps a named stage in rawPath (`/prod/instances/…`); 1.0's `path` has none.
  if (event.rawPath !== undefined && stage && stage !== '$default' && path.startsWith(`/${stage}/`)) {
    path = path.slice(stage.length + 1);
  }
  return { method, path };
}

/** The engine's route for the request; a miss is thrown, to be answered as it says. */
function route(method: string, path: string, served: ReadonlySet<string>): HttpRoute {
  const r = parseHttpRoute(method, path, { serves: (w) => served.has(w) });
  if (!isHttpRoute(r)) throw new HttpError(r);
  return r;
}

/** The request body as JSON (undefined when empty). */
function body(event: ApiGatewayEvent): unknown {
  const raw = event.body;
  if (raw === undefined || raw === null || raw === '') return undefined;
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ValidationError('INVALID_INPUT', 'the body is not JSON', [
      { path: 'body', message: messageOf(e) },
    ]);
  }
}

/** One query parameter, for either payload version. */
function query(event: ApiGatewayEvent, name: string): string | undefined {
  const v = event.queryStringParameters?.[name];
  if (v !== undefined) return v;
  if (!event.rawQueryString) return undefined;
  return new URLSearchParams(event.rawQueryString).get(name) ?? undefined;
}

const json = (statusCode: number, value: unknown): ApiGatewayResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

/** The error answer: the engine's code and status by kind, the HTTP layer's own, or 500. */
function errorResult(e: unknown): ApiGatewayResult {
  if (e instanceof HttpError) {
    const { status, code, message } = e.miss;
    const result = json(status, { error: { code, message } });
    if (e.miss.kind === 'method-not-allowed') result.headers['allow'] = e.miss.allow;
    return result;
  }
  const kind = errorKind(e);
  if (kind && isStepfoldError(e)) {
    const issues: Issue[] = e.issues;
    return json(HTTP_STATUS[kind], {
      error: { code: e.code, message: e.message, ...(issues.length ? { issues } : {}) },
    });
  }
  return json(500, { error: { code: 'INTERNAL', message: 'internal error' } });
}

/** Options of {@link createApiHandler}. */
export interface ApiHandlerOptions {
  /** A runner that executes nothing (`execute: false`): it writes and hands tasks off. */
  runner: Runner;
  log: LambdaLog;
}

/** Creates the API Gateway handler over a hand-off runner. */
export function createApiHandler(
  o: ApiHandlerOptions,
): (event: ApiGatewayEvent) => Promise<ApiGatewayResult> {
  const { runner, log } = o;
  const served = new Set(runner.workflows);
  return async (event) => {
    const { method, path } = methodAndPath(event);
    let result: ApiGatewayResult;
    try {
      const r = route(method, path, served);
      let s: Snapshot;
      switch (r.kind) {
        case 'start': {
          // `?priority=`: a value that is no number reaches the runner as NaN (INVALID_OPTIONS, 400).
          const priority = query(event, 'priority');
          const options =
            priority === undefined
              ? {}
              : { priority: priority.trim() === '' ? Number.NaN : Number(priority) };
          s = await runner.start(r.workflow, r.id, body(event), options);
          result = json(201, s);
          break;
        }
        case 'signal': {
          const signalId = query(event, 'signalId');
          const sent = await runner.handle({
            type: 'signal',
            id: r.id,
            name: r.name,
            payload: body(event),
            ...(signalId === undefined ? {} : { signalId }),
          });
          // A finished instance ignores the signal: say so (409), not "200, unchanged", so a
          // late approval of a completed order is not taken for an accepted one.
          if (!sent.written && isTerminal(sent.snapshot.status)) {
            throw new InstanceFinishedError(r.id, sent.snapshot.status);
          }
          result = json(200, sent.snapshot);
          break;
        }
        case 'callback':
          s = await runner.callback(r.token, body(event));
          result = json(200, s);
          break;
        case 'cancel':
        case 'abort': {
          const b = body(event) as { reason?: unknown } | undefined;
          const reason = typeof b?.reason === 'string' ? b.reason : undefined;
          s = await (r.kind === 'cancel' ? runner.cancel(r.id, reason) : runner.abort(r.id, reason));
          result = json(200, s);
          break;
        }
        case 'get': {
          const found = await runner.get(r.id);
          if (!found) throw new NotFoundError(r.id);
          result = json(200, found);
          break;
        }
      }
    } catch (e) {
      result = errorResult(e);
      if (result.statusCode >= 500 && !(e instanceof HttpError)) console.error(e);
    }
    const code =
      result.statusCode >= 400
        ? (JSON.parse(result.body) as { error: { code: string } }).error.code
        : undefined;
    log({
      fn: 'api',
      action: 'answered',
      method,
      path,
      status: result.statusCode,
      ...(code ? { code } : {}),
    });
    return result;
  };
}
