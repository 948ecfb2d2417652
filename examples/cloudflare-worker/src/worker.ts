/**
 * stepfold inside a Cloudflare Worker. Each workflow instance lives in its own Durable Object
 * (`idFromName(instanceId)`): the object's transactional storage holds the snapshot, its alarm
 * is the instance's `wakeAt`, and the engine's runner executes handlers inside the object's
 * request or alarm.
 *
 *   POST /workflows/:name/instances/:id        body = input          → 201 snapshot
 *   POST /instances/:id/signals/:name[?signalId=…] body = payload    → 200 snapshot
 *   POST /instances/:id/cancel | /abort        body = { reason? }    → 200 snapshot
 *   GET  /instances/:id                                              → 200 snapshot
 *
 * Errors: `{ error: { code, message, issues? } }` with the engine error's stable `code`.
 */
import {
  assertValidId,
  createRunner,
  errorKind,
  HTTP_STATUS,
  isStepfoldError,
  NotFoundError,
  type Runner,
  type Snapshot,
  ValidationError,
} from '@stepfold/engine';
import { createDurableObjectStore, type DurableObjectStore } from './do-store.js';
import { handlers, workflows } from './workflows.js';

export interface Env {
  WORKFLOWS: DurableObjectNamespace;
}

/** An error of the HTTP layer itself (no such route, wrong method). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const served = new Set(workflows.map((w) => w.name));

type Route =
  | { kind: 'start'; id: string; workflow: string }
  | { kind: 'signal'; id: string; name: string; signalId?: string }
  | { kind: 'cancel' | 'abort'; id: string }
  | { kind: 'get'; id: string };

/** Parses and validates the path (ids are percent-encoded path segments). */
function route(request: Request): Route {
  const url = new URL(request.url);
  let parts: string[];
  try {
    parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
  } catch {
    throw new ValidationError('INVALID_ID', 'malformed percent-encoding in the path', [
      { path: 'path', message: url.pathname },
    ]);
  }
  const method = request.method;
  const expect = (m: string) => {
    if (method !== m) throw new HttpError(405, 'METHOD_NOT_ALLOWED', `use ${m} for ${url.pathname}`);
  };
  const [a, b, c, d, ...rest] = parts;
  let r: Route | undefined;
  if (rest.length === 0 && a === 'workflows' && c === 'instances' && b !== undefined && d !== undefined) {
    expect('POST');
    assertValidId(b, 'workflow name');
    // A workflow this Worker does not run is a path to nothing (NO_ROUTE, 404), not the engine's
    // UNKNOWN_WORKFLOW, which is a deployment fault (500).
    if (served.has(b)) r = { kind: 'start', workflow: b, id: d };
  } else if (rest.length === 0 && a === 'instances' && b !== undefined) {
    if (c === undefined) {
      expect('GET');
      r = { kind: 'get', id: b };
    } else if (c === 'signals' && d !== undefined) {
      expect('POST');
      assertValidId(d, 'signal name');
      const signalId = url.searchParams.get('signalId');
      if (signalId !== null) assertValidId(signalId, 'signalId');
      r = { kind: 'signal', id: b, name: d, ...(signalId === null ? {} : { signalId }) };
    } else if ((c === 'cancel' || c === 'abort') && d === undefined) {
      expect('POST');
      r = { kind: c, id: b };
    }
  }
  if (!r) throw new HttpError(404, 'NO_ROUTE', `no route for ${method} ${url.pathname}`);
  assertValidId(r.id, 'instance id');
  return r;
}

/** The request body as JSON; an empty body is `undefined`. */
async function readJson(request: Request): Promise<unknown> {
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
async function readReason(request: Request): Promise<string | undefined> {
  const body = await readJson(request);
  if (body === undefined) return undefined;
  const reason = (body as { reason?: unknown } | null)?.reason;
  if (
    typeof body !== 'object' ||
    body === null ||
    Array.isArray(body) ||
    !['undefined', 'string'].includes(typeof reason)
  ) {
    throw new ValidationError('INVALID_EVENT', 'body must be { reason?: string }', [
      { path: 'body.reason', message: 'must be a string' },
    ]);
  }
  return reason as string | undefined;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function errorResponse(e: unknown): Response {
  if (e instanceof HttpError) return json(e.status, { error: { code: e.code, message: e.message } });
  if (isStepfoldError(e)) {
    // The engine's table gives the status, as it gives the CLI its exit code.
    const kind = errorKind(e);
    return json(kind === undefined ? 500 : HTTP_STATUS[kind], {
      error: { code: e.code, message: e.message, ...(e.issues.length ? { issues: e.issues } : {}) },
    });
  }
  return json(500, { error: { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) } });
}

/** One workflow instance: its snapshot in transactional storage, its `wakeAt` as the alarm. */
export class WorkflowInstance implements DurableObject {
  private readonly store: DurableObjectStore;
  private readonly runner: Runner;

  constructor(
    private readonly state: DurableObjectState,
    _env: Env,
  ) {
    this.store = createDurableObjectStore(state.storage);
    this.runner = createRunner({ store: this.store, workflows, handlers, clock: () => Date.now() });
  }

  async fetch(request: Request): Promise<Response> {
    try {
      const r = route(request);
      let s: Snapshot | null;
      switch (r.kind) {
        case 'start':
          return json(201, await this.runner.start(r.workflow, r.id, await readJson(request)));
        case 'signal':
          s = await this.runner.signal(
            r.id,
            r.name,
            await readJson(request),
            r.signalId === undefined ? {} : { signalId: r.signalId },
          );
          break;
        case 'cancel':
          s = await this.runner.cancel(r.id, await readReason(request));
          break;
        case 'abort':
          s = await this.runner.abort(r.id, await readReason(request));
          break;
        case 'get':
          s = await this.runner.get(r.id);
          if (!s) throw new NotFoundError(r.id);
          break;
      }
      return json(200, s);
    } catch (e) {
      return errorResponse(e);
    }
  }

  /** `wakeAt` came: tick the instance (retry backoff, timer, deadline), running what it dispatches. */
  async alarm(): Promise<void> {
    const now = Date.now();
    const before = await this.store.current();
    if (!before) return;
    await this.runner.processDue(now, 1);
    const after = await this.store.current();
    // A write re-armed the alarm in its own transaction. Without one (the alarm fired before
    // wakeAt, or the tick had nothing to do) the platform would drop the alarm: re-arm it.
    if (after && after.version === before.version && after.wakeAt !== null) {
      await this.state.storage.setAlarm(Math.max(after.wakeAt, now + 1_000));
    }
  }
}

export default {
  /** Validates the path, then routes to the instance's Durable Object. */
  async fetch(request, env) {
    try {
      const { id } = route(request);
      return await env.WORKFLOWS.get(env.WORKFLOWS.idFromName(id)).fetch(request);
    } catch (e) {
      return errorResponse(e);
    }
  },
} satisfies ExportedHandler<Env>;
